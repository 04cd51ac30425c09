// SPDX-License-Identifier: GPL-2.0-only
/*
 * The SMB2 the driver speaks itself, between the MS-SMBD negotiate and the
 * hand-over to smbd: it answers the SMB2 NEGOTIATE from the master's
 * policy (the response smbd would send) and routes the first SESSION_SETUP.
 * Afterwards this work item only has the receive path hand the PDUs that
 * arrived before the connection had an owner over to it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/random.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "smbdirect.h"

#define SMBD_FILETIME_UNIX_EPOCH 116444736000000000ULL

/* Queue @bytes as the connection's next PDU; @final_reason: then go. */
static int smbd_smb2_send(struct smbd_conn *conn, const u8 *bytes, size_t len,
			  u32 final_reason)
{
	struct smbd_pdu_out *pdu = smbd_pdu_out_alloc(len);
	int ret;

	if (!pdu)
		return -ENOMEM;
	memcpy(pdu->data, bytes, len);
	pdu->final_reason = final_reason;
	ret = smbd_send_queue_pdu(conn, pdu);
	if (ret)
		smbd_pdu_out_free(pdu);
	return ret;
}

/*
 * Answer @buf with an SMB2 error (when its header can be read) and
 * disconnect with @reason once the answer is out.
 */
static void smbd_smb2_refuse(struct smbd_conn *conn, const u8 *buf,
			     size_t len, u32 status, u32 reason)
{
	u8 out[SMB2_ERROR_RESP_SIZE];
	struct smb2_hdr hdr;
	unsigned long flags;
	size_t out_len;

	/* nothing after this request is looked at */
	spin_lock_irqsave(&conn->lock, flags);
	smbd_conn_enter_locked(conn, SMBD_CONN_REFUSED);
	spin_unlock_irqrestore(&conn->lock, flags);
	if (smb2_hdr_parse(buf, len, &hdr) == SMBD_E_OK &&
	    smb2_error_resp_build(&hdr, status, out, sizeof(out),
				  &out_len) == SMBD_E_OK &&
	    !smbd_smb2_send(conn, out, out_len, reason))
		return;
	smbd_conn_fail(conn, reason);
}

static void smbd_smb2_negotiate(struct smbd_conn *conn, const u8 *buf,
				u32 len)
{
	const struct smb2_negotiate_policy *policy = &conn->params->policy;
	u8 salt[SMB2_PREAUTH_SALT_SIZE];
	struct smb2_negotiate_req req;
	struct smb2_negotiated neg;
	enum smbd_proto_error err;
	unsigned long flags;
	size_t resp_len;
	u64 now;
	u8 *resp;

	err = smb2_negotiate_req_parse(buf, len, &req);
	if (err) {
		smbd_conn_info(conn, "SMB2 NEGOTIATE: %s\n",
			       smbd_proto_error_text(err));
		smbd_smb2_refuse(conn, buf, len, NT_STATUS_INVALID_PARAMETER,
				 SMBD_REASON_BAD_SMB2);
		return;
	}
	smb2_negotiate_decide(policy, &req, &neg);
	if (neg.status) {
		smbd_smb2_refuse(conn, buf, len, neg.status,
				 SMBD_REASON_BAD_SMB2);
		return;
	}

	resp = kvmalloc(SMBD_SMB2_RESP_MAX, GFP_KERNEL);
	conn->route.neg_req = kvmalloc(len, GFP_KERNEL);
	if (!resp || !conn->route.neg_req) {
		kvfree(resp);
		smbd_conn_fail(conn, SMBD_REASON_NO_MEMORY);
		return;
	}
	memcpy(conn->route.neg_req, buf, len);
	conn->route.neg_req_len = len;
	now = div_u64(ktime_get_real_ns(), 100) + SMBD_FILETIME_UNIX_EPOCH;
	get_random_bytes(salt, sizeof(salt));
	err = smb2_negotiate_resp_build(policy, &req, &neg, now, salt, resp,
					SMBD_SMB2_RESP_MAX, &resp_len);
	if (err) {
		kvfree(resp);
		smbd_conn_fail(conn, SMBD_REASON_NO_MEMORY);
		return;
	}
	conn->route.neg_resp = resp;
	conn->route.neg_resp_len = resp_len;
	conn->route.dialect = neg.dialect;
	memcpy(conn->route.client_guid, req.client_guid,
	       sizeof(conn->route.client_guid));

	spin_lock_irqsave(&conn->lock, flags);
	smbd_conn_enter_locked(conn, SMBD_CONN_SESSION_SETUP);
	spin_unlock_irqrestore(&conn->lock, flags);
	smbd_conn_dbg(conn, "SMB2 NEGOTIATE answered, dialect %#x\n",
		      conn->route.dialect);
	if (smbd_smb2_send(conn, resp, resp_len, 0))
		smbd_conn_fail(conn, SMBD_REASON_NO_MEMORY);
}

/* NEGOTIATE request, response and SESSION_SETUP in one NEW_CHANNEL blob. */
static int smbd_smb2_keep_setup(struct smbd_conn *conn, const u8 *buf,
				u32 len)
{
	u32 req_len = conn->route.neg_req_len, resp_len = conn->route.neg_resp_len;
	u8 *all = kvmalloc(req_len + resp_len + len, GFP_KERNEL);

	if (!all)
		return -ENOMEM;
	memcpy(all, conn->route.neg_req, req_len);
	memcpy(all + req_len, conn->route.neg_resp, resp_len);
	memcpy(all + req_len + resp_len, buf, len);
	kvfree(conn->route.neg_req);
	kvfree(conn->route.neg_resp);
	conn->route.neg_req = NULL;
	conn->route.neg_resp = NULL;
	conn->route.setup_bytes = all;
	conn->route.setup_len = len;
	return 0;
}

static void smbd_smb2_session_setup(struct smbd_conn *conn, const u8 *buf,
				    u32 len)
{
	struct smb2_session_setup_req req;
	enum smbd_proto_error err;
	int ret;

	err = smb2_session_setup_parse(buf, len, &req);
	if (err) {
		smbd_conn_info(conn, "SESSION_SETUP: %s\n",
			       smbd_proto_error_text(err));
		smbd_smb2_refuse(conn, buf, len, NT_STATUS_INVALID_PARAMETER,
				 SMBD_REASON_BAD_SMB2);
		return;
	}
	if (smbd_smb2_keep_setup(conn, buf, len)) {
		smbd_conn_fail(conn, SMBD_REASON_NO_MEMORY);
		return;
	}

	smbd_conn_dbg(conn, "SESSION_SETUP for session %#llx\n",
		      req.hdr.session_id);
	if (req.flags & SMB2_SESSION_FLAG_BINDING) {
		conn->route.session_id = req.hdr.session_id;
		ret = smbd_route_binding(conn, req.hdr.session_id);
		if (ret == -ENOENT) {
			/* MS-SMB2 3.3.5.5.2: no such session to bind to */
			smbd_smb2_refuse(conn, buf, len,
					 NT_STATUS_USER_SESSION_DELETED,
					 SMBD_REASON_UNKNOWN_SESSION);
			return;
		}
	} else {
		ret = smbd_route_offer(conn);
		if (ret == -ENOENT) {
			smbd_conn_fail(conn, SMBD_REASON_NO_LISTENER);
			return;
		}
	}
	if (ret && ret != -ENOTCONN)
		smbd_conn_fail(conn, SMBD_REASON_NO_MEMORY);
}

/*
 * The SMB2 NEGOTIATE and the first SESSION_SETUP, in order; once adopted,
 * the PDUs held meanwhile go to the owner.
 */
void smbd_smb2_work(struct work_struct *work)
{
	struct smbd_conn *conn = container_of(work, struct smbd_conn,
					      route.smb2_work);
	enum smbd_conn_state state;
	struct smbd_kevent *kev;

	while ((kev = smbd_recv_take_held(conn, &state))) {
		if (state == SMBD_CONN_SMB2_NEGOTIATE)
			smbd_smb2_negotiate(conn, kev->data, kev->ev.data_len);
		else
			smbd_smb2_session_setup(conn, kev->data,
						kev->ev.data_len);
		smbd_kevent_free(kev);
	}
	if (smbd_conn_state_in(state, SMBD_CONN_HAS_OWNER))
		smbd_recv_hand_over(conn);
	smbd_recv_refill(conn);
}
