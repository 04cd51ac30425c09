// SPDX-License-Identifier: GPL-2.0-only
/*
 * SET_PARAMS: validate what the master smbd registers and turn it into the
 * immutable parameter set every new connection takes a reference on. The
 * file that sets them is the master until it closes; the listeners exist
 * while there is one.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/overflow.h>
#include <linux/uidgid.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "smbdirect.h"

/* under smbd_lock */
static struct smbd_file *smbd_master;
static struct smbd_params *smbd_current_params;

static bool smbd_dialect_ok(u32 d)
{
	return d == SMB2_DIALECT_300 || d == SMB2_DIALECT_302 ||
	       d == SMB2_DIALECT_311;
}

/* ids[0..count) within 0..max, distinct; ids[count..) zero */
static bool smbd_algorithms_ok(const u16 *ids, u32 count, u16 min, u16 max)
{
	u32 i, j;

	if (count > SMBD_MAX_ALGORITHMS)
		return false;
	for (i = 0; i < SMBD_MAX_ALGORITHMS; i++) {
		if (i >= count) {
			if (ids[i])
				return false;
			continue;
		}
		if (ids[i] < min || ids[i] > max)
			return false;
		for (j = 0; j < i; j++)
			if (ids[j] == ids[i])
				return false;
	}
	return true;
}

static bool smbd_ms_ok(u32 ms)
{
	return ms >= 1 && ms <= SMBD_MAX_TIMEOUT_MS;
}

static bool smbd_set_params_valid(const struct smbd_set_params *sp)
{
	if (sp->flags || sp->__reserved)
		return false;
	if (sp->receive_credit_max < 1 || sp->receive_credit_max > 65535 ||
	    sp->send_credit_target < 1 || sp->send_credit_target > 65535)
		return false;
	if (sp->max_send_size < SMBD_MIN_RECEIVE_SIZE ||
	    sp->max_send_size > SMBD_MAX_IO_SIZE ||
	    sp->max_receive_size < SMBD_MIN_RECEIVE_SIZE ||
	    sp->max_receive_size > SMBD_MAX_IO_SIZE)
		return false;
	if (sp->max_fragmented_size < SMBD_MIN_FRAGMENTED_SIZE ||
	    sp->max_fragmented_size > SMBD_MAX_PDU_SIZE)
		return false;
	if (sp->max_read_write_size < 1 ||
	    sp->max_read_write_size > SMBD_MAX_PDU_SIZE)
		return false;
	if (!smbd_ms_ok(sp->keepalive_interval_ms) ||
	    !smbd_ms_ok(sp->keepalive_timeout_ms) ||
	    !smbd_ms_ok(sp->negotiate_timeout_ms) ||
	    !smbd_ms_ok(sp->accept_timeout_ms) ||
	    (sp->setup_timeout_ms && !smbd_ms_ok(sp->setup_timeout_ms)) ||
	    (sp->credit_timeout_ms && !smbd_ms_ok(sp->credit_timeout_ms)))
		return false;
	if (!(sp->security_mode & SMB2_NEGOTIATE_SIGNING_ENABLED) ||
	    (sp->security_mode & ~(u32)(SMB2_NEGOTIATE_SIGNING_ENABLED |
					SMB2_NEGOTIATE_SIGNING_REQUIRED)))
		return false;
	if (!smbd_dialect_ok(sp->min_dialect) ||
	    !smbd_dialect_ok(sp->max_dialect) ||
	    sp->min_dialect > sp->max_dialect)
		return false;
	if (sp->max_transact_size < 65536 || sp->max_read_size < 65536 ||
	    sp->max_write_size < 65536)
		return false;
	if (sp->policy_flags & ~SMBD_POLICY_POSIX_EXTENSIONS)
		return false;
	if (!smbd_algorithms_ok(sp->ciphers, sp->cipher_count,
				SMB2_ENCRYPTION_AES128_CCM,
				SMB2_ENCRYPTION_AES256_GCM) ||
	    !smbd_algorithms_ok(sp->signing_algorithms,
				sp->signing_algorithm_count,
				SMB2_SIGNING_HMAC_SHA256,
				SMB2_SIGNING_AES128_GMAC))
		return false;
	return sp->sec_blob_len <= SMBD_MAX_SEC_BLOB;
}

static struct smbd_params *
smbd_params_from_user(const struct smbd_set_params *sp)
{
	struct smb2_negotiate_policy *pol;
	struct smbd_params *p;

	if (!smbd_set_params_valid(sp))
		return ERR_PTR(-EINVAL);

	p = kzalloc(struct_size(p, blob, sp->sec_blob_len), GFP_KERNEL);
	if (!p)
		return ERR_PTR(-ENOMEM);
	kref_init(&p->ref);
	if (sp->sec_blob_len &&
	    copy_from_user(p->blob, u64_to_user_ptr(sp->sec_blob_ptr),
			   sp->sec_blob_len)) {
		kfree(p);
		return ERR_PTR(-EFAULT);
	}

	/* the engine's bounds; the peer learns the values it runs with */
	p->local.receive_credit_max = min_t(u32, sp->receive_credit_max,
					    SMBD_MAX_CREDITS);
	p->local.send_credit_target = min_t(u32, sp->send_credit_target,
					    SMBD_MAX_CREDITS);
	p->local.max_send_size = sp->max_send_size;
	p->local.max_receive_size = sp->max_receive_size;
	p->local.max_fragmented_size = sp->max_fragmented_size;
	p->local.max_read_write_size = sp->max_read_write_size;
	p->keepalive_interval_ms = sp->keepalive_interval_ms;
	p->keepalive_timeout_ms = sp->keepalive_timeout_ms;
	p->negotiate_timeout_ms = sp->negotiate_timeout_ms;
	p->setup_timeout_ms = sp->setup_timeout_ms ?: sp->negotiate_timeout_ms;
	p->accept_timeout_ms = sp->accept_timeout_ms;
	p->credit_timeout_ms = sp->credit_timeout_ms ?: sp->keepalive_timeout_ms;

	pol = &p->policy;
	memcpy(pol->server_guid, sp->server_guid, sizeof(pol->server_guid));
	pol->capabilities = sp->capabilities;
	pol->security_mode = sp->security_mode;
	pol->min_dialect = sp->min_dialect;
	pol->max_dialect = sp->max_dialect;
	pol->max_transact_size = sp->max_transact_size;
	pol->max_read_size = sp->max_read_size;
	pol->max_write_size = sp->max_write_size;
	memcpy(pol->ciphers, sp->ciphers, sizeof(pol->ciphers));
	memcpy(pol->signing_algorithms, sp->signing_algorithms,
	       sizeof(pol->signing_algorithms));
	pol->cipher_count = sp->cipher_count;
	pol->signing_algorithm_count = sp->signing_algorithm_count;
	pol->posix_extensions =
		!!(sp->policy_flags & SMBD_POLICY_POSIX_EXTENSIONS);
	pol->sec_blob = p->blob;
	pol->sec_blob_len = sp->sec_blob_len;
	return p;
}

static void smbd_params_release(struct kref *ref)
{
	kfree(container_of(ref, struct smbd_params, ref));
}

void smbd_params_put(struct smbd_params *p)
{
	if (p)
		kref_put(&p->ref, smbd_params_release);
}

struct smbd_params *smbd_params_get_current(void)
{
	struct smbd_params *p;

	mutex_lock(&smbd_lock);
	p = smbd_current_params;
	if (p)
		kref_get(&p->ref);
	mutex_unlock(&smbd_lock);
	return p;
}

/* Whether the listeners should exist: a master holds the parameters. */
bool smbd_params_registered(void)
{
	bool ret;

	mutex_lock(&smbd_lock);
	ret = smbd_master;
	mutex_unlock(&smbd_lock);
	return ret;
}

/* For debugfs: the master's process (smbd_lock held). */
pid_t smbd_params_master_tgid(void)
{
	lockdep_assert_held(&smbd_lock);
	return smbd_master ? smbd_master->owner_tgid : 0;
}

/* Whether @uid is the master's user (smbd_lock held). */
bool smbd_params_master_user(kuid_t uid)
{
	lockdep_assert_held(&smbd_lock);
	return smbd_master && uid_eq(uid, smbd_master->owner);
}

/* @file stops being the master (closing, or failed SET_PARAMS): was it? */
bool smbd_params_file_closed(struct smbd_file *file)
{
	lockdep_assert_held(&smbd_lock);
	if (smbd_master != file)
		return false;
	smbd_master = NULL;
	smbd_params_put(smbd_current_params);
	smbd_current_params = NULL;
	return true;
}

static DEFINE_MUTEX(smbd_set_params_lock);

/*
 * The first SET_PARAMS of a master brings the listeners up; a port another
 * listener holds gives the role up again, and the caller learns the port.
 * The listeners are changed without smbd_lock: a connect request in
 * progress, which their destruction waits for, may be waiting for it.
 */
static int smbd_set_params_locked(struct smbd_file *file,
				  struct smbd_set_params *sp)
{
	struct smbd_params *p;
	bool first = false;
	u16 busy_port = 0;
	int ret = 0;

	lockdep_assert_held(&smbd_set_params_lock);
	p = smbd_params_from_user(sp);
	if (IS_ERR(p))
		return PTR_ERR(p);

	mutex_lock(&smbd_lock);
	if (smbd_master && smbd_master != file) {
		ret = -EBUSY;
	} else {
		/* connections keep the parameters they started with */
		swap(smbd_current_params, p);
		first = !smbd_master;
		smbd_master = file;
	}
	mutex_unlock(&smbd_lock);
	smbd_params_put(p);
	if (!first)
		return ret;

	ret = smbd_listeners_update(&busy_port);
	if (!ret)
		return 0;
	mutex_lock(&smbd_lock);
	smbd_params_file_closed(file);
	mutex_unlock(&smbd_lock);
	smbd_listeners_update(NULL);
	sp->out_busy_port = busy_port;
	return ret;
}

int smbd_ioctl_set_params(struct file *filp, void *cmd)
{
	struct smbd_file *file = filp->private_data;
	struct smbd_set_params *sp = cmd;
	int ret;

	if (!capable(CAP_NET_ADMIN))
		return -EPERM;
	if (sp->out_busy_port || sp->__reserved2)
		return -EINVAL;
	/* one at a time: a call must not report a role another one undoes */
	mutex_lock(&smbd_set_params_lock);
	ret = smbd_set_params_locked(file, sp);
	mutex_unlock(&smbd_set_params_lock);
	return ret;
}
