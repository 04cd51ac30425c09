/* SPDX-License-Identifier: LGPL-3.0-or-later */
/*
 * libsmbd-tevent: libsmbd on a tevent loop, the way smbd runs.
 *
 * smbd_tevent_setup() watches the device's descriptor. Each time it is
 * readable the glue fetches one batch of events and dispatches them in
 * order: events of an attached connection go to that connection's
 * callback, each RDMA_DONE completes the smbd_tevent_rdma_send() request
 * that started it, and everything else (NEW_CONNECTION, NEW_CHANNEL before
 * its connection is attached, OVERFLOW) goes to the default callback.
 * An event and the data it points to are valid only during its callback.
 *
 * The glue is a talloc child of the memory context it was set up on and
 * does not own the device handle: free the glue before closing the
 * handle, and not from inside one of its callbacks. Free its RDMA
 * requests before it: a request that outlives the glue never completes.
 */
#ifndef LIBSMBD_TEVENT_H
#define LIBSMBD_TEVENT_H

#include <stdint.h>

#include <libsmbd.h>

#ifdef __cplusplus
extern "C" { /* tevent.h has no C++ guard of its own */
#endif

#include <talloc.h>
#include <tevent.h>

struct smbd_tevent;

/*
 * A callback for events. The glue calls the default callback with an
 * event of type 0 when fetching failed (status: the negative errno,
 * smbd_dev_errmsg() says why); it then stops watching the device, and
 * every RDMA request, unfinished or new, fails with that errno.
 */
typedef void (*smbd_tevent_fn)(const struct smbd_dev_event *ev,
			       void *private_data);

struct smbd_tevent *smbd_tevent_setup(TALLOC_CTX *mem_ctx,
				      struct tevent_context *ev,
				      struct smbd_dev *dev,
				      smbd_tevent_fn default_fn,
				      void *private_data);

/*
 * Sends @conn_id's events to @fn from now on (smbd does this when it
 * adopts the connection at its NEW_CHANNEL). The connection is detached
 * after its DISCONNECTED, its last event, has been delivered.
 * EEXIST: already attached.
 */
int smbd_tevent_conn_attach(struct smbd_tevent *glue, uint64_t conn_id,
			    smbd_tevent_fn fn, void *private_data);
void smbd_tevent_conn_detach(struct smbd_tevent *glue, uint64_t conn_id);

/*
 * Queues one RDMA transfer (op->user_data is ignored). The transfers
 * queued in one turn of the loop start together, in order, in one call
 * into the kernel; when it has too many unfinished, the rest wait in the
 * glue and start as earlier ones finish. The request completes when the glue
 * dispatches the transfer's RDMA_DONE, in the order of the device's events:
 * before its connection's DISCONNECTED (a transfer still waiting then
 * fails with ENOTCONN). op->buf must stay allocated until the request
 * completes or is freed. The glue dispatches no RDMA_DONE but its own: a
 * transfer started on the handle directly completes unseen.
 *
 * Freeing the request before it completes is allowed (smbd frees the
 * requests of a connection that goes away): a transfer that has not
 * started never starts, and one the kernel is running is forgotten, its
 * pool memory held by the library until the kernel is done with it.
 */
struct tevent_req *smbd_tevent_rdma_send(TALLOC_CTX *mem_ctx,
					 struct tevent_context *ev,
					 struct smbd_tevent *glue,
					 const struct smbd_dev_rdma *op);
/*
 * As smbd_tevent_rdma_send, an RDMA WRITE with the SMB2 READ response it
 * serves (smbd_dev_rdma_start_replies): @reply's bytes are copied at once
 * and go out behind the WRITE when it starts. When the connection's send
 * queue has no room for them (ENOBUFS), its transfers wait in the glue,
 * in order, until its SEND_ROOM event, which is then also delivered to
 * the connection's callback. The request completes with
 * the transfer's RDMA_DONE: 0, the response was queued; ENOMEM or EINVAL,
 * it was not sent and the connection stays; EIO or ENOTCONN, the
 * connection goes down; ENOENT, it was gone before the transfer started;
 * EOPNOTSUPP, the kernel has no SMBD_FEATURE_RW_REPLY.
 */
struct tevent_req *smbd_tevent_rdma_reply_send(
    TALLOC_CTX *mem_ctx, struct tevent_context *ev, struct smbd_tevent *glue,
    const struct smbd_dev_rdma *op, const struct smbd_dev_pdu *reply);
/*
 * 0 with *bytes moved, or the errno the transfer ended with: EIO (the
 * RDMA operation failed; the connection is being disconnected), ENOTCONN,
 * ENOMEM, EINVAL, or what smbd_dev_rdma_start refused it with.
 */
int smbd_tevent_rdma_recv(struct tevent_req *req, uint64_t *bytes);

#ifdef __cplusplus
}
#endif

#endif /* LIBSMBD_TEVENT_H */
