// SPDX-License-Identifier: GPL-2.0-only
/*
 * Each file's buffer pool: buffer_size bytes of zeroed pages per buffer,
 * pool_buffers of them or fewer as the first GET_MEM_PARAMS chooses (an
 * smbd per client need not pin the most its server allows), charged to
 * the allocating process's memory cgroup, allocated at the first
 * GET_MEM_PARAMS or mmap() and mapped into smbd page by page as
 * it touches them (after sound/core/pcm_native.c). RDMA moves file data
 * into and out of these pages without a copy through the kernel.
 *
 * Only the opener's address space maps the pool: mmap() elsewhere fails,
 * and a copy of the mapping that MADV_DOFORK lets a child inherit faults
 * with SIGBUS: the mapping is not a mixed map, so fork() copies no page
 * table entries of it.
 *
 * Lifetime: a mapping holds the file (vm_file) and each mapped page holds a
 * reference, and connections hold the file too; the pages are freed with
 * the file, so after every connection of it was drained.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/slab.h>

#include "compat.h"
#include "smbdirect.h"

static unsigned long smbd_pool_bytes(u32 buffers)
{
	return (unsigned long)buffers * smbd_buffer_size;
}

/* The pool's buffers; before it is allocated, those it will have by default. */
u32 smbd_pool_count(struct smbd_file *file)
{
	/* pairs with smbd_pool_alloc(): the count is set before the pages */
	return smp_load_acquire(&file->pool_pages) ? file->pool_buffers :
						     smbd_pool_buffers;
}

/* Allocates the pool, unless another caller came first. */
static int smbd_pool_alloc(struct smbd_file *file, u32 buffers)
{
	unsigned long i, n = smbd_pool_bytes(buffers) >> PAGE_SHIFT;
	struct page **pages;
	int ret = 0;

	mutex_lock(&file->pool_lock);
	if (file->pool_pages)
		goto out;
	pages = kvcalloc(n, sizeof(*pages), GFP_KERNEL_ACCOUNT);
	if (!pages) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!pages[i])
			break;
	}
	if (i < n) {
		while (i--)
			put_page(pages[i]);
		kvfree(pages);
		ret = -ENOMEM;
		goto out;
	}
	file->pool_nr_pages = n;
	file->pool_buffers = buffers;
	/* pairs with the lockless checks: the pages before the pointer */
	smp_store_release(&file->pool_pages, pages);
out:
	mutex_unlock(&file->pool_lock);
	return ret;
}

/*
 * The pool's pages, allocated on first use with @buffers buffers (at most
 * pool_buffers; 0: pool_buffers). -EBUSY if the pool is there with another
 * count.
 */
int smbd_pool_get(struct smbd_file *file, u32 buffers)
{
	/* every RDMA_RW asks: no lock once the pool is there */
	if (!smp_load_acquire(&file->pool_pages)) {
		int ret = smbd_pool_alloc(file, buffers ?: smbd_pool_buffers);

		if (ret)
			return ret;
	}
	return buffers && buffers != file->pool_buffers ? -EBUSY : 0;
}

void smbd_pool_free(struct smbd_file *file)
{
	unsigned long i;

	for (i = 0; i < file->pool_nr_pages; i++)
		put_page(file->pool_pages[i]);
	kvfree(file->pool_pages);
	file->pool_pages = NULL;
	file->pool_nr_pages = 0;
	file->pool_buffers = 0;
}

int smbd_ioctl_get_mem_params(struct file *filp, void *cmd)
{
	struct smbd_file *file = filp->private_data;
	struct smbd_mem_params *mp = cmd;
	int ret;

	if (mp->flags || mp->__reserved || mp->buffer_count > smbd_pool_buffers)
		return -EINVAL;
	ret = smbd_pool_get(file, mp->buffer_count);
	if (ret)
		return ret;
	mp->out_buffer_count = file->pool_buffers;
	mp->out_buffer_size = smbd_buffer_size;
	mp->out_mmap_size = smbd_pool_bytes(file->pool_buffers);
	mp->out_mmap_offset = 0;
	return 0;
}

static vm_fault_t smbd_pool_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct smbd_file *file = vma->vm_file->private_data;
	struct page *page;

	/* the pages were there before the mapping; it cannot grow past them */
	if (!smbd_file_serves(file, vma->vm_mm) ||
	    vmf->pgoff >= file->pool_nr_pages)
		return VM_FAULT_SIGBUS;
	page = file->pool_pages[vmf->pgoff];
	get_page(page);
	vmf->page = page;
	return 0;
}

static const struct vm_operations_struct smbd_pool_vm_ops = {
	.fault = smbd_pool_fault,
};

int smbd_pool_mmap(struct smbd_file *file, struct vm_area_struct *vma)
{
	u32 buffers;
	int ret;

	if (!smbd_file_serves(file, vma->vm_mm))
		return -EBADFD;
	/* a race with a first GET_MEM_PARAMS of another count: -EBUSY below */
	buffers = smbd_pool_count(file);
	/* the whole pool, shared, from offset 0: nothing else is defined */
	if (vma->vm_pgoff ||
	    vma->vm_end - vma->vm_start != smbd_pool_bytes(buffers))
		return -EINVAL;
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	ret = smbd_pool_get(file, buffers);
	if (ret)
		return ret;

	/* smbd forks per client: children must not inherit the pool */
	vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_ops = &smbd_pool_vm_ops;
	return 0;
}
