/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the kernels the module supports (Debian 12's 6.1, 6.12) spell
 * differently. Kbuild probes the headers and defines SMBD_HAVE_*; this
 * file supplies the newer interface where the kernel lacks it.
 */
#ifndef SMBD_COMPAT_H
#define SMBD_COMPAT_H

#include <linux/mm.h>

#ifndef SMBD_HAVE_VM_FLAGS_SET
/* 6.3 made vm_flags read-only behind vm_flags_set() */
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}
#endif

#endif /* SMBD_COMPAT_H */
