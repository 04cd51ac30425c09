/* SPDX-License-Identifier: LGPL-3.0-or-later */
/*
 * libsmbd: SMB Direct through /dev/smbd (smbdirect.ko), for smbd.
 *
 * The kernel driver terminates the RDMA transport, runs the MS-SMBD
 * protocol and answers SMB2 NEGOTIATE itself; this library gives smbd the
 * rest without knowing the ioctls:
 *
 * - the master opens the device, hands it its policy and listens
 *   (smbd_dev_set_policy, smbd_dev_listen); each NEW_CONNECTION event
 *   carries a token a forked worker claims with smbd_dev_accept on its own
 *   handle (flow 2);
 * - a worker registers the SessionIds it owns so that channels binding to
 *   them reach it as NEW_CHANNEL events (flow 1);
 * - PDUs arrive as events and leave with smbd_dev_send;
 * - file data lives in the device's mapped pool (smbd_dev_buf_alloc) and
 *   moves by RDMA READ/WRITE against the Buffer Descriptor V1 list of an
 *   SMB2 READ/WRITE request (smbd_dev_rdma_start).
 *
 * Every function that can fail returns 0 or a positive errno value and
 * leaves a sentence for a person in smbd_dev_errmsg(). No handle is shared
 * between threads by the library; a caller that does must serialise.
 * After fork() a child must not use its parent's handle except to
 * smbd_dev_close() it; it opens its own.
 */
#ifndef LIBSMBD_H
#define LIBSMBD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* event types, disconnect reasons, feature bits, send and RDMA flags */
#include <linux/smbd.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Structs with a size field may grow at their end. The others (events,
 * PDUs, transfers, passed in arrays) stay as they are for a symbol version
 * of the library (LIBSMBD_0); a change comes as new symbol versions.
 */
#define LIBSMBD_VERSION_MAJOR 0
#define LIBSMBD_VERSION_MINOR 6
#define LIBSMBD_VERSION_PATCH 0

/* "0.2.0": the library's version, which may differ from the header's */
const char *smbd_dev_version(void);

struct smbd_dev; /* an open /dev/smbd */
struct smbd_dev_events; /* storage for fetched events, reused per fetch */
struct smbd_dev_buf; /* pool memory lent to one transfer */

/*
 * struct smbd_dev_open_args - what smbd_dev_open needs
 * @size: sizeof(struct smbd_dev_open_args) (the struct may grow)
 * @abi_version: SMBD_ABI_VERSION the caller was built with; the library
 *	and the kernel must be at least that new
 * @required_features: SMBD_FEATURE_* bits the caller cannot work without
 * @path: the device node; NULL for /dev/smbd
 */
struct smbd_dev_open_args {
	uint32_t size;
	uint32_t abi_version;
	uint64_t required_features;
	const char *path;
};

#define SMBD_DEV_OPEN_ARGS_INIT                                                \
	{                                                                      \
		sizeof(struct smbd_dev_open_args), SMBD_ABI_VERSION, 0, NULL   \
	}

/*
 * Opens the device (non-blocking, close-on-exec) and checks that the library
 * and the kernel speak @args->abi_version or a newer one (EPROTONOSUPPORT)
 * and that the kernel offers every required
 * feature (EOPNOTSUPP). On failure *devp is NULL and @errbuf (if given)
 * holds why, e.g. that the module is not loaded.
 */
int smbd_dev_open(const struct smbd_dev_open_args *args, struct smbd_dev **devp,
		  char *errbuf, size_t errlen);
/*
 * Closes the handle. Once no forked copy of its descriptor is open either,
 * the kernel ends its connections, unregisters its sessions and frees its
 * pool. Every buffer of the handle is invalid afterwards. Safe on NULL and
 * in a forked child (which only closes its copy of the descriptor).
 */
void smbd_dev_close(struct smbd_dev *dev);
/* What the last failed call on @dev did wrong, in words. */
const char *smbd_dev_errmsg(const struct smbd_dev *dev);
/* The descriptor to poll: readable while events are queued. */
int smbd_dev_fd(const struct smbd_dev *dev);

/*
 * struct smbd_dev_info - what the kernel offers
 * @size: bytes filled
 * @abi_version: SMBD_ABI_VERSION of the kernel
 * @features: SMBD_FEATURE_*
 * @max_events: SEND_DONE and NEW_CONNECTION events the handle's queue
 *	holds before it drops them; RDMA transfers whose RDMA_DONE may be
 *	unread
 * @max_pdu_size: largest PDU sent or received
 * @pool_buffers: buffers in the handle's pool (the module's pool_buffers,
 *	or fewer as smbd_dev_set_pool_buffers() chose)
 * @buffer_size: bytes per pool buffer
 * @max_iovs: most iovecs in one PDU
 * @max_descriptors: most Buffer Descriptor V1 entries in one transfer
 */
struct smbd_dev_info {
	uint32_t size;
	uint32_t abi_version;
	uint64_t features;
	uint32_t max_events;
	uint32_t max_pdu_size;
	uint32_t pool_buffers;
	uint32_t buffer_size;
	uint32_t max_iovs;
	uint32_t max_descriptors;
};
/* Fills the first @size bytes of @info (sizeof(*info) as the caller knows it).
 */
void smbd_dev_get_info(const struct smbd_dev *dev, struct smbd_dev_info *info,
		       size_t size);

/* Names for logs: "PDU_RECEIVED", "keepalive_timeout"; "unknown" else. */
const char *smbd_dev_event_name(uint32_t type);
const char *smbd_dev_reason_name(uint32_t reason);

/* ---- the master: policy and listening ---- */

/*
 * struct smbd_dev_policy - the SMB Direct parameters and the SMB2
 * NEGOTIATE answer the driver gives on smbd's behalf. Fill it with
 * smbd_dev_policy_init() and change what smb.conf says; the meaning and
 * limits of each field are those of struct smbd_set_params.
 * @ciphers, @signing_algorithms: SMB2 ids in preference order
 * @sec_blob: the SPNEGO negTokenInit of the NEGOTIATE response
 */
struct smbd_dev_policy {
	uint32_t size;
	uint32_t receive_credit_max;
	uint32_t send_credit_target;
	uint32_t max_send_size;
	uint32_t max_receive_size;
	uint32_t max_fragmented_size;
	uint32_t max_read_write_size;
	uint32_t keepalive_interval_ms;
	uint32_t keepalive_timeout_ms;
	uint32_t negotiate_timeout_ms;
	uint32_t accept_timeout_ms;
	uint8_t server_guid[SMBD_GUID_SIZE];
	uint32_t capabilities;
	uint32_t security_mode;
	uint32_t min_dialect;
	uint32_t max_dialect;
	uint32_t max_transact_size;
	uint32_t max_read_size;
	uint32_t max_write_size;
	uint32_t policy_flags; /* SMBD_POLICY_* */
	const uint16_t *ciphers;
	size_t cipher_count;
	const uint16_t *signing_algorithms;
	size_t signing_algorithm_count;
	const uint8_t *sec_blob;
	size_t sec_blob_len;
	/* since 0.2 */
	uint32_t setup_timeout_ms;
	/* since 0.3 */
	uint32_t credit_timeout_ms;
};

/*
 * Fills the first @size bytes (sizeof(*policy) as the caller knows it)
 * with the values a Linux or Windows client meets in practice: 255 receive
 * credits, 1364-byte sends, 8 MiB transfers, dialects 3.0-3.1.1, AES
 * ciphers and signing algorithms, an empty security blob, no ServerGuid
 * (all zero: smbd_dev_set_policy() registers a random one); policy->size
 * becomes @size.
 */
void smbd_dev_policy_init(struct smbd_dev_policy *policy, size_t size);
/*
 * Hands the policy to the kernel (needs CAP_NET_ADMIN); until then, and
 * after this handle closes, RDMA connections are refused. Fields past
 * policy->size take their defaults.
 */
int smbd_dev_set_policy(struct smbd_dev *dev,
			const struct smbd_dev_policy *policy);
/* New sessions now reach this handle as NEW_CONNECTION events. */
int smbd_dev_listen(struct smbd_dev *dev);

/* ---- workers: connections and sessions ---- */

/* Claims a NEW_CONNECTION by its token; its NEW_CHANNEL follows. */
int smbd_dev_accept(struct smbd_dev *dev, const uint8_t *token,
		    uint64_t *conn_id);
/* Channels that bind to @session_id reach this handle (flow 1). */
int smbd_dev_register_session(struct smbd_dev *dev, uint64_t session_id);
int smbd_dev_unregister_session(struct smbd_dev *dev, uint64_t session_id);
/* Drops a connection; its DISCONNECTED event (reason local) follows. */
int smbd_dev_disconnect(struct smbd_dev *dev, uint64_t conn_id);

/*
 * struct smbd_dev_conn_stats - what one connection carried (since 0.5);
 * each field as its out_ twin of struct smbd_conn_stats in <linux/smbd.h>
 * @size: bytes filled
 */
struct smbd_dev_conn_stats {
	uint32_t size;
	uint32_t reserved; /* 0 */
	uint64_t pdus_received;
	uint64_t bytes_received;
	uint64_t pdus_sent;
	uint64_t bytes_sent;
	uint64_t keepalives_sent;
	uint64_t credit_stalls;
	uint64_t rdma_reads;
	uint64_t rdma_writes;
	uint64_t rdma_read_bytes;
	uint64_t rdma_write_bytes;
	uint64_t rdma_errors;
};
/*
 * Fills the first @size bytes of @stats (sizeof(*stats) as the caller
 * knows it) with the counters of @conn_id: a connection of this handle, or
 * with CAP_NET_ADMIN any the driver holds (ENOENT otherwise, and once the
 * connection is gone). EOPNOTSUPP: the kernel has no SMBD_FEATURE_CONN_STATS.
 */
int smbd_dev_get_conn_stats(struct smbd_dev *dev, uint64_t conn_id,
			    struct smbd_dev_conn_stats *stats, size_t size);

/* ---- events ---- */

/*
 * struct smbd_dev_event - one event, decoded; pointers stay valid until
 * the next fetch into the same storage
 * @type: SMBD_EVENT_*
 * @flags: NEW_CHANNEL: SMBD_CHANNEL_*
 * @conn_id: the connection (NEW_CONNECTION: what smbd_dev_accept returns)
 * @user_data: SEND_DONE, RDMA_DONE: the caller's, as given
 * @status: SEND_DONE, RDMA_DONE: 0 or a negative errno
 * @reason: DISCONNECTED: SMBD_REASON_*
 * @count: RDMA_DONE: bytes moved; OVERFLOW: events lost
 * @session_id: NEW_CHANNEL: the SessionId bound to (0: a new session)
 * @dialect: NEW_CHANNEL: the SMB2 dialect the driver negotiated
 * @token: NEW_CONNECTION: SMBD_TOKEN_SIZE bytes for smbd_dev_accept
 * @client_guid: NEW_CONNECTION: SMBD_GUID_SIZE bytes
 * @local, @remote: NEW_CONNECTION, NEW_CHANNEL: the RDMA addresses
 * @data, @data_len: PDU_RECEIVED: the SMB2 PDU; NEW_CHANNEL: the three
 *	messages below back to back
 * @negotiate_req, @negotiate_resp, @session_setup (with their lengths):
 *	NEW_CHANNEL: the SMB2 NEGOTIATE request, the driver's response and
 *	the first SESSION_SETUP request, exactly as on the wire
 * @max_pdu_size: NEW_CHANNEL: the largest PDU smbd_dev_send takes on the
 *	connection, the peer's MaxFragmentedSize: every response, a whole
 *	compound, must fit in it
 */
struct smbd_dev_event {
	uint32_t type;
	uint32_t flags;
	uint64_t conn_id;
	uint64_t user_data;
	int32_t status;
	uint32_t reason;
	uint64_t count;
	uint64_t session_id;
	uint32_t dialect;
	const uint8_t *token;
	const uint8_t *client_guid;
	const struct smbd_sockaddr *local;
	const struct smbd_sockaddr *remote;
	const uint8_t *data;
	size_t data_len;
	const uint8_t *negotiate_req;
	size_t negotiate_req_len;
	const uint8_t *negotiate_resp;
	size_t negotiate_resp_len;
	const uint8_t *session_setup;
	size_t session_setup_len;
	uint32_t max_pdu_size;
};

int smbd_dev_events_new(struct smbd_dev *dev, struct smbd_dev_events **evsp);
void smbd_dev_events_free(struct smbd_dev_events *evs);
/*
 * Fetches what is queued, without blocking: *count is 0 when nothing is.
 * An RDMA_DONE returns its buffer's pin (see smbd_dev_buf_free). An event
 * the library cannot decode (a kernel bug) is dropped, the others are
 * delivered, and smbd_dev_errmsg() says so.
 */
int smbd_dev_fetch(struct smbd_dev *dev, struct smbd_dev_events *evs,
		   size_t *count);
const struct smbd_dev_event *
smbd_dev_events_at(const struct smbd_dev_events *evs, size_t index);

/* ---- sending PDUs ---- */

/*
 * struct smbd_dev_pdu - one SMB2 PDU (or compound) to send
 * @conn_id: a connection this handle owns
 * @user_data: returned in SEND_DONE when @flags has SMBD_SEND_NOTIFY
 * @iov, @iovcnt: the PDU is their concatenation (no length prefix)
 * @flags: SMBD_SEND_NOTIFY, SMBD_SEND_INVALIDATE
 * @invalidate_token: with SMBD_SEND_INVALIDATE, the Token of the request's
 *	first Buffer Descriptor (SMB2_CHANNEL_RDMA_V1_INVALIDATE)
 */
struct smbd_dev_pdu {
	uint64_t conn_id;
	uint64_t user_data;
	const struct iovec *iov;
	size_t iovcnt;
	uint32_t flags;
	uint32_t invalidate_token;
};

/*
 * Sends @count PDUs in order; their bytes are copied before it returns.
 * *sent (if given) counts those accepted, also on failure. EAGAIN: a
 * PDU's connection holds as much as the kernel queues for one
 * (SMBD_FEATURE_SEND_ROOM), as a socket's full send buffer; send it and
 * the connection's later PDUs after its SEND_ROOM event, which the kernel
 * queues once there is room.
 */
int smbd_dev_send(struct smbd_dev *dev, const struct smbd_dev_pdu *pdus,
		  size_t count, size_t *sent);

/* ---- pool memory and RDMA ---- */

/*
 * The handle's pool is to have @buffers buffers (since 0.6), fewer than the
 * module's pool_buffers that smbd_dev_get_info() reports at first, so that
 * a process serving one client need not pin what the server allows the
 * largest: call it before the first smbd_dev_buf_alloc(), which maps the
 * pool. EINVAL: 0 or more than the module's pool_buffers; EBUSY: the pool
 * is mapped already, of another count; EOPNOTSUPP: the kernel has no
 * SMBD_FEATURE_POOL_SIZE (and @buffers is not the module's count). On
 * success smbd_dev_get_info() reports @buffers.
 */
int smbd_dev_set_pool_buffers(struct smbd_dev *dev, uint32_t buffers);

/*
 * Lends @len bytes (1..what one transfer may move) of the mapped pool as one
 * contiguous range; the pool is mapped on the first call. ENOBUFS: not
 * enough free buffers now (retry after a buffer is freed); EMSGSIZE: more
 * than the pool can ever give at once, or than one transfer can move.
 */
int smbd_dev_buf_alloc(struct smbd_dev *dev, size_t len,
		       struct smbd_dev_buf **bufp);
uint8_t *smbd_dev_buf_data(const struct smbd_dev_buf *buf);
size_t smbd_dev_buf_len(const struct smbd_dev_buf *buf);
/*
 * Gives the memory back. While an RDMA operation on it is unfinished the
 * buffers stay lent until its RDMA_DONE is fetched, so the kernel never
 * writes into memory that was reused.
 */
void smbd_dev_buf_free(struct smbd_dev_buf *buf);

/*
 * Checks a Buffer Descriptor V1 list from an SMB2 READ/WRITE request (whole
 * 16-byte entries, none empty or wrapping, at most max_descriptors) and
 * returns the bytes it describes.
 */
int smbd_dev_descs_check(const struct smbd_dev *dev, const uint8_t *descs,
			 size_t descs_len, uint64_t *total);

/*
 * struct smbd_dev_rdma - one transfer for an SMB2 READ or WRITE
 * @conn_id: the connection the request came on
 * @user_data: returned in its RDMA_DONE
 * @direction: SMBD_RW_WRITE_TO_PEER (serves a READ) or
 *	SMBD_RW_READ_FROM_PEER (serves a WRITE)
 * @buf, @offset, @length: the local bytes, inside @buf
 * @descs, @descs_len: the request's Buffer Descriptor V1 list, as it
 *	arrived (the Channel info at ReadChannelInfoOffset/WriteChannelInfo...)
 */
struct smbd_dev_rdma {
	uint64_t conn_id;
	uint64_t user_data;
	uint32_t direction;
	struct smbd_dev_buf *buf;
	size_t offset;
	size_t length;
	const uint8_t *descs;
	size_t descs_len;
};

/*
 * Starts @count transfers; each ends with exactly one RDMA_DONE event
 * (before its connection's DISCONNECTED). *started (if given) counts those
 * started, also on failure. EAGAIN: too many unfinished; fetch events first.
 * ENOBUFS (only with a reply, below): the reply's connection has a full
 * send queue; start it again after the connection's SEND_ROOM event.
 */
int smbd_dev_rdma_start(struct smbd_dev *dev, const struct smbd_dev_rdma *ops,
			size_t count, size_t *started);

/*
 * As smbd_dev_rdma_start, each RDMA WRITE with the SMB2 READ response it
 * serves (@replies[i], for the same connection; NULL: none; @replies NULL:
 * none at all): the kernel sends the response on the queue pair right
 * behind the WRITE, which the client therefore sees first, without a wait
 * for RDMA_DONE in between (SMBD_FEATURE_RW_REPLY; EOPNOTSUPP without).
 * The response's bytes are copied before the call returns; it takes no
 * SMBD_SEND_NOTIFY. RDMA_DONE still ends each transfer and the lending of
 * its memory. Its status 0: the response was queued. ENOMEM or EINVAL: the
 * WRITE could not start, the response was not sent and the connection
 * stays; answer the request another way. EIO or ENOTCONN: the connection
 * goes down.
 */
int smbd_dev_rdma_start_replies(struct smbd_dev *dev,
				const struct smbd_dev_rdma *ops,
				const struct smbd_dev_pdu *const *replies,
				size_t count, size_t *started);

#ifdef __cplusplus
}
#endif

#endif /* LIBSMBD_H */
