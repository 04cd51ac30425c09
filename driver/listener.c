// SPDX-License-Identifier: GPL-2.0-only
/*
 * The RDMA listener: one wildcard rdma_cm id on the SMB Direct port for the
 * module's lifetime. Connect requests are accepted only while a master smbd
 * has registered its parameters; every later CM event of a connection ends
 * here too and is handed to its connection.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <net/net_namespace.h>
#include <rdma/ib_cm.h>

#include "smbdirect.h"

#define SMBD_LISTEN_BACKLOG 64

static struct rdma_cm_id *smbd_listen_id;

static int smbd_connect_request(struct rdma_cm_id *cm_id,
				struct rdma_cm_event *event)
{
	struct smbd_params *params;
	int ret;

	smbd_count(SMBD_CNT_CONN_REQUESTS, 1);
	params = smbd_params_get_current();
	if (!params) {
		ret = -ECONNREFUSED;
		goto reject;
	}
	if (!(cm_id->device->attrs.device_cap_flags &
	      IB_DEVICE_MEM_MGT_EXTENSIONS)) {
		/* send-with-invalidate and FRWR are part of SMB Direct */
		smbd_params_put(params);
		ret = -EOPNOTSUPP;
		goto reject;
	}
	if (atomic_inc_return(&smbd_setup_conns) > SMBD_MAX_SETUP_CONNS) {
		/* too many peers that have not reached an owner yet */
		atomic_dec(&smbd_setup_conns);
		smbd_params_put(params);
		ret = -EBUSY;
		goto reject;
	}
	ret = smbd_conn_create(cm_id, params, &event->param.conn);
	if (!ret)
		return 0;
	atomic_dec(&smbd_setup_conns);
	smbd_params_put(params);
reject:
	smbd_count(SMBD_CNT_CONN_REJECTED, 1);
	rdma_reject(cm_id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
	/* non-zero: the CM destroys the id */
	return ret;
}

static int smbd_cm_handler(struct rdma_cm_id *cm_id,
			   struct rdma_cm_event *event)
{
	struct smbd_conn *conn = cm_id->context;

	if (event->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return smbd_connect_request(cm_id, event);
	if (cm_id == smbd_listen_id || !conn)
		return 0;

	switch (event->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		smbd_conn_established(conn);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		smbd_conn_fail(conn, SMBD_REASON_PEER);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/* the CM waits until the teardown destroys this id */
		smbd_conn_fail(conn, SMBD_REASON_DEVICE_REMOVED);
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_ADDR_CHANGE:
		smbd_conn_fail(conn, SMBD_REASON_RDMA_ERROR);
		break;
	default:
		break;
	}
	return 0;
}

int smbd_listener_start(void)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_ANY),
		.sin_port = htons(smbd_port),
	};
	struct rdma_cm_id *id;
	int ret;

	id = rdma_create_id(&init_net, smbd_cm_handler, NULL, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	ret = rdma_bind_addr(id, (struct sockaddr *)&sin);
	if (!ret)
		ret = rdma_listen(id, SMBD_LISTEN_BACKLOG);
	if (ret) {
		pr_err("cannot listen on port %u: %pe\n", smbd_port,
		       ERR_PTR(ret));
		rdma_destroy_id(id);
		return ret;
	}
	smbd_listen_id = id;
	return 0;
}

/* Waits for connect requests in progress; no new one arrives after. */
void smbd_listener_stop(void)
{
	rdma_destroy_id(smbd_listen_id);
	smbd_listen_id = NULL;
}
