// SPDX-License-Identifier: GPL-2.0-only
/*
 * smbdirect.ko: SMB Direct (MS-SMBD) terminated in the kernel for Samba's
 * smbd, which drives it through the /dev/smbd misc device.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/smbd.h>

#include "smbdirect.h"

/* [MS-SMBD] 2.1: SMB's port for InfiniBand and RoCE, 5445 for iWARP */
unsigned int smbd_ib_port = 445;
module_param_named(ib_port, smbd_ib_port, uint, 0444);
MODULE_PARM_DESC(ib_port,
		 "RDMA port for InfiniBand and RoCE clients, 0: none (default 445)");

unsigned int smbd_iwarp_port = 5445;
module_param_named(iwarp_port, smbd_iwarp_port, uint, 0444);
MODULE_PARM_DESC(iwarp_port,
		 "RDMA port for iWARP clients, 0: none (default 5445)");

bool smbd_ib_on_iwarp_port = true;
module_param_named(ib_on_iwarp_port, smbd_ib_on_iwarp_port, bool, 0644);
MODULE_PARM_DESC(ib_on_iwarp_port,
		 "serve InfiniBand and RoCE clients on iwarp_port too, as clients that try 5445 first need (default Y)");

unsigned int smbd_pool_buffers = 64;
module_param_named(pool_buffers, smbd_pool_buffers, uint, 0444);
MODULE_PARM_DESC(pool_buffers, "buffers in each file's pool, at most (default 64)");

unsigned int smbd_buffer_size = 1U << 20;
module_param_named(buffer_size, smbd_buffer_size, uint, 0444);
MODULE_PARM_DESC(buffer_size,
		 "bytes per pool buffer, a power of two >= PAGE_SIZE (default 1 MiB)");

#define SMBD_MAX_POOL_BUFFERS 1024
#define SMBD_MAX_BUFFER_SIZE (16U << 20)

struct workqueue_struct *smbd_wq;

static int smbd_open(struct inode *inode, struct file *filp)
{
	struct smbd_file *file;

	/* a file serves the process that opened it: a kernel thread is none */
	if (!current->mm)
		return -EPERM;
	file = smbd_file_alloc();
	if (!file)
		return -ENOMEM;
	filp->private_data = file;
	return stream_open(inode, filp);
}

static int smbd_release(struct inode *inode, struct file *filp)
{
	smbd_file_release(filp->private_data);
	return 0;
}

static int smbd_mmap(struct file *filp, struct vm_area_struct *vma)
{
	return smbd_pool_mmap(filp->private_data, vma);
}

static __poll_t smbd_poll(struct file *filp, poll_table *wait)
{
	return smbd_events_poll(filp->private_data, filp, wait);
}

/* open files pin the module (.owner), so unload waits for their close */
static const struct file_operations smbd_fops = {
	.owner = THIS_MODULE,
	.open = smbd_open,
	.release = smbd_release,
	.poll = smbd_poll,
	.mmap = smbd_mmap,
	.unlocked_ioctl = smbd_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice smbd_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = SMBD_DEVICE_NAME,
	.fops = &smbd_fops,
	.mode = 0600,
	.groups = smbd_attr_groups,
};

static int smbd_check_params(void)
{
	/* equal covers both 0: at least one port is served */
	if (smbd_ib_port > 65535 || smbd_iwarp_port > 65535 ||
	    smbd_ib_port == smbd_iwarp_port) {
		pr_err("ib_port %u and iwarp_port %u: each 0..65535, not both 0, not equal\n",
		       smbd_ib_port, smbd_iwarp_port);
		return -EINVAL;
	}
	if (smbd_pool_buffers == 0 ||
	    smbd_pool_buffers > SMBD_MAX_POOL_BUFFERS) {
		pr_err("pool_buffers %u not in 1..%u\n", smbd_pool_buffers,
		       SMBD_MAX_POOL_BUFFERS);
		return -EINVAL;
	}
	if (!is_power_of_2(smbd_buffer_size) || smbd_buffer_size < PAGE_SIZE ||
	    smbd_buffer_size > SMBD_MAX_BUFFER_SIZE) {
		pr_err("buffer_size %u not a power of two in %lu..%u\n",
		       smbd_buffer_size, PAGE_SIZE, SMBD_MAX_BUFFER_SIZE);
		return -EINVAL;
	}
	return 0;
}

static int __init smbd_init(void)
{
	int ret;

	ret = smbd_check_params();
	if (ret)
		return ret;
	smbd_wq = alloc_workqueue("smbdirect", WQ_MEM_RECLAIM, 0);
	if (!smbd_wq)
		return -ENOMEM;
	ret = misc_register(&smbd_misc);
	if (ret) {
		pr_err("cannot register /dev/%s: %pe\n", SMBD_DEVICE_NAME,
		       ERR_PTR(ret));
		goto out_wq;
	}
	ret = smbd_listener_init();
	if (ret)
		goto out_misc;
	smbd_debugfs_init();
	return 0;

out_misc:
	misc_deregister(&smbd_misc);
out_wq:
	destroy_workqueue(smbd_wq);
	return ret;
}

static void __exit smbd_exit(void)
{
	smbd_debugfs_exit();
	/* no file is open, so no master: the listeners are gone already */
	smbd_listener_exit();
	misc_deregister(&smbd_misc);
	smbd_conns_shutdown();
	destroy_workqueue(smbd_wq);
}

module_init(smbd_init);
module_exit(smbd_exit);

MODULE_DESCRIPTION("SMB Direct (SMB2 over RDMA) for Samba through /dev/smbd");
MODULE_LICENSE("GPL");
