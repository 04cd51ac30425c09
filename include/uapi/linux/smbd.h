/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause */
/*
 * /dev/smbd: SMB Direct (MS-SMBD) terminated in the kernel on behalf of smbd.
 *
 * ABI rules (after iommufd):
 *  - every command struct starts with __u32 size and __u32 flags; the kernel
 *    reads it with copy_struct_from_user() semantics, so a struct may grow at
 *    its end: a shorter size than the kernel knows is zero-extended, a longer
 *    one is accepted only if the bytes the kernel does not know are zero;
 *  - input fields the kernel does not understand yet (flags bits, __reserved)
 *    must be zero;
 *  - output fields are named out_*; 64-bit values and user pointers are
 *    __aligned_u64; all structs are multiples of 8 bytes with no implicit
 *    padding;
 *  - arrays passed by pointer (events, send entries, RDMA operations) carry
 *    their element size so that elements can grow the same way.
 *
 * Errors (ioctl returns -1 and sets errno):
 *  EFAULT      a user pointer could not be read or written
 *  EINVAL      size below the command's minimum, an unknown flag, a non-zero
 *              reserved field, or a field out of range
 *  E2BIG       size above what the kernel knows and the extra bytes not zero
 *  ENOTTY      unknown command, or a command this kernel does not offer
 *              (check out_features of SMBD_IOC_GET_INFO)
 *  EBADFD      the calling process did not open the file (see below)
 *  EPERM       CAP_NET_ADMIN missing (SET_PARAMS, LISTEN), ACCEPT by a
 *              process that does not own the listening file, or
 *              REGISTER_SESSION by neither the master's user nor a holder
 *              of CAP_NET_ADMIN
 *  EBUSY       the role is already held by another file (SET_PARAMS, LISTEN),
 *              the session is registered by another file, or the pool is
 *              there with another count of buffers (GET_MEM_PARAMS; an
 *              mmap() or RDMA_RW that races the first GET_MEM_PARAMS)
 *  EADDRINUSE  SET_PARAMS: another listener (ksmbd, say) holds an RDMA port
 *              the driver serves; out_busy_port names it
 *  ENOENT      unknown connection id, session id or token; a connection's
 *              id is unknown to its owner once its DISCONNECTED is queued;
 *              CONN_STATS: a connection another file owns (or none does),
 *              asked without CAP_NET_ADMIN
 *  EMSGSIZE    GET_EVENTS: the first pending event's data does not fit in
 *              data_len (out_data_used tells the size needed); SEND_PDU: a PDU
 *              larger than the connection's negotiated MaxFragmentedSize
 *  ENOSPC      REGISTER_SESSION: the file holds out_max_sessions sessions
 *  EAGAIN      GET_EVENTS on an O_NONBLOCK file with no event queued;
 *              RDMA_RW with out_max_events operations unfinished or unread;
 *              SEND_PDU: the connection's send queue is full (see
 *              struct smbd_send_pdu; a SEND_ROOM event follows)
 *  ENOBUFS     RDMA_RW: an operation's reply finds its connection's send
 *              queue full, as SEND_PDU's EAGAIN (a SEND_ROOM event follows)
 *  ENOTCONN    the connection is disconnected (an RDMA device that goes
 *              away ends its connections with SMBD_REASON_DEVICE_REMOVED;
 *              the module cannot be removed while a file is open)
 *  ENOMEM      the kernel could not allocate what the command needs (a
 *              PDU's copy, an RDMA operation, a session's entry, the
 *              parameters, the buffer pool)
 *  EINTR       interrupted by a signal before anything was done; a blocking
 *              GET_EVENTS restarts instead when the handler has SA_RESTART
 *
 * A file serves the process (the address space) that opened it. Another
 * process that holds its descriptor, inherited across fork() or passed to
 * it, gets EBADFD from every command and from mmap(); it may poll() and
 * close() it. The file's roles, sessions and connections stay until every
 * descriptor of it is closed, so a child that keeps its copy keeps them
 * alive: close it in the child (O_CLOEXEC covers exec()).
 *
 * Batched commands (GET_EVENTS, SEND_PDU, RDMA_RW) report in out_done how many
 * entries were processed; when an entry fails after at least one succeeded
 * the call returns 0 and out_done points at the failing entry.
 */
#ifndef _UAPI_LINUX_SMBD_H
#define _UAPI_LINUX_SMBD_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define SMBD_DEVICE_NAME "smbd"
#define SMBD_ABI_VERSION 1

#define SMBD_IOCTL_TYPE 0xDB

enum {
	SMBD_CMD_BASE = 0x80,
	SMBD_CMD_GET_INFO = SMBD_CMD_BASE,
	SMBD_CMD_SET_PARAMS,
	SMBD_CMD_LISTEN,
	SMBD_CMD_ACCEPT,
	SMBD_CMD_REGISTER_SESSION,
	SMBD_CMD_UNREGISTER_SESSION,
	SMBD_CMD_GET_MEM_PARAMS,
	SMBD_CMD_GET_EVENTS,
	SMBD_CMD_SEND_PDU,
	SMBD_CMD_RDMA_RW,
	SMBD_CMD_DISCONNECT,
	SMBD_CMD_CONN_STATS
};

/* Limits that are part of the ABI (the kernel may report lower ones). */
#define SMBD_MAX_ALGORITHMS 8		/* ciphers / signing algorithms */
#define SMBD_MAX_SEC_BLOB 4096		/* initial SPNEGO blob */
#define SMBD_TOKEN_SIZE 16		/* NEW_CONNECTION claim token */
#define SMBD_GUID_SIZE 16
#define SMBD_MAX_TIMEOUT_MS 3600000	/* any *_ms field of SET_PARAMS */
/*
 * Array elements: the size of each in ABI version 1, the least a caller
 * may give, and the most any element may claim.
 */
#define SMBD_EVENT_SIZE_V1 128		/* struct smbd_event */
#define SMBD_SEND_ENTRY_SIZE_V1 40	/* struct smbd_send_entry */
#define SMBD_RW_OP_SIZE_V1 48		/* struct smbd_rw_op */
#define SMBD_RW_OP_SIZE_V2 64		/* ... with @reply_ptr */
#define SMBD_MAX_ELEMENT_SIZE 4096

/* Feature bits of smbd_info.out_features: one per capability. */
#define SMBD_FEATURE_SET_PARAMS (1ULL << 0)	/* SET_PARAMS, RDMA listener */
#define SMBD_FEATURE_LISTEN (1ULL << 1)		/* LISTEN / ACCEPT (flow 2) */
#define SMBD_FEATURE_SESSIONS (1ULL << 2)	/* REGISTER/UNREGISTER (flow 1) */
#define SMBD_FEATURE_EVENTS (1ULL << 3)		/* GET_EVENTS + poll */
#define SMBD_FEATURE_SEND_PDU (1ULL << 4)	/* SEND_PDU */
#define SMBD_FEATURE_SEND_INVALIDATE (1ULL << 5) /* SMBD_SEND_INVALIDATE */
#define SMBD_FEATURE_POOL (1ULL << 6)		/* GET_MEM_PARAMS + mmap */
#define SMBD_FEATURE_RDMA_RW (1ULL << 7)	/* RDMA_RW */
#define SMBD_FEATURE_DISCONNECT (1ULL << 8)	/* DISCONNECT */
#define SMBD_FEATURE_RW_REPLY (1ULL << 9)	/* smbd_rw_op.reply_ptr */
#define SMBD_FEATURE_SEND_ROOM (1ULL << 10)	/* send queue bound, SEND_ROOM */
#define SMBD_FEATURE_CONN_STATS (1ULL << 11)	/* CONN_STATS */
#define SMBD_FEATURE_POOL_SIZE (1ULL << 12)	/* smbd_mem_params.buffer_count */

/**
 * struct smbd_info - SMBD_IOC_GET_INFO: the first call of every user
 * @size: sizeof(struct smbd_info)
 * @flags: must be 0
 * @out_abi_version: SMBD_ABI_VERSION of the kernel
 * @out_max_events: SEND_DONE and NEW_CONNECTION events this file queues
 *	before it drops them (see GET_EVENTS); RDMA operations whose
 *	RDMA_DONE may be unread
 * @out_features: SMBD_FEATURE_* offered by this kernel
 * @out_max_batch: most entries one GET_EVENTS, SEND_PDU or RDMA_RW takes
 * @out_max_pdu_size: largest SMB2 PDU SEND_PDU takes and a PDU_RECEIVED
 *	event can carry (upper bound of any negotiated MaxFragmentedSize)
 * @out_max_slices: most local slices in one RDMA operation
 * @out_max_descriptors: most Buffer Descriptor V1 entries in one operation
 * @out_pool_buffers: the most buffers a file's pool may have, and its
 *	count unless GET_MEM_PARAMS chooses fewer (module parameter)
 * @out_buffer_size: bytes per pool buffer (module parameter)
 * @out_port: the RDMA port iWARP clients are served on (module parameter
 *	iwarp_port, [MS-SMBD] 2.1: 5445), 0 if none
 * @out_max_iovs: most iovecs in one SEND_PDU entry
 * @out_mmap_size: bytes of the mapping of a pool of @out_pool_buffers
 *	(see SMBD_IOC_GET_MEM_PARAMS)
 * @out_ib_port: the RDMA port InfiniBand and RoCE clients are served on
 *	(module parameter ib_port, [MS-SMBD] 2.1: SMB's 445), 0 if none
 * @out_port_flags: SMBD_PORT_*
 * @out_max_sessions: most sessions one file may hold registered (0 from
 *	a kernel that predates the field)
 * @out_send_queue_bytes: PDU bytes one connection may hold queued or in
 *	flight before SEND_PDU refuses more (SMBD_FEATURE_SEND_ROOM; 0 from a
 *	kernel that predates the field, which holds any amount)
 *
 * The driver listens on these ports only while a master holds SET_PARAMS.
 */
struct smbd_info {
	__u32 size;
	__u32 flags;
	__u32 out_abi_version;
	__u32 out_max_events;
	__aligned_u64 out_features;
	__u32 out_max_batch;
	__u32 out_max_pdu_size;
	__u32 out_max_slices;
	__u32 out_max_descriptors;
	__u32 out_pool_buffers;
	__u32 out_buffer_size;
	__u32 out_port;
	__u32 out_max_iovs;
	__aligned_u64 out_mmap_size;
	__u32 out_ib_port;
	__u32 out_port_flags;
	__u32 out_max_sessions;
	__u32 out_send_queue_bytes;
};

/* smbd_info.out_port_flags */
#define SMBD_PORT_IB_ON_IWARP (1U << 0)	/* out_port serves IB/RoCE too */

#define SMBD_IOC_GET_INFO _IO(SMBD_IOCTL_TYPE, SMBD_CMD_GET_INFO)

/* smbd_set_params.policy_flags */
#define SMBD_POLICY_POSIX_EXTENSIONS (1U << 0)	/* answer the POSIX context */

/**
 * struct smbd_set_params - SMBD_IOC_SET_PARAMS: master smbd (CAP_NET_ADMIN)
 * @size: sizeof(struct smbd_set_params)
 * @flags: must be 0
 *
 * MS-SMBD transport (MS-SMBD 3.1.1.1; 0 in a field is invalid):
 * @receive_credit_max: receive buffers posted per connection (1..65535;
 *	the driver posts at most 1024 and what the RDMA device holds)
 * @send_credit_target: send credits requested from the peer (1..65535;
 *	likewise bounded)
 * @max_send_size: largest SMB Direct message sent (128..65536)
 * @max_receive_size: size of each posted receive buffer (128..65536)
 * @max_fragmented_size: largest reassembled PDU accepted (>= 131072, at most
 *	out_max_pdu_size)
 * @max_read_write_size: largest RDMA transfer for one SMB2 READ/WRITE
 *	(1..out_max_pdu_size)
 * @keepalive_interval_ms: idle time before a keepalive is sent
 * @keepalive_timeout_ms: wait for any message after a keepalive request
 * @negotiate_timeout_ms: wait for the MS-SMBD Negotiate Request after
 *	accepting an RDMA connection (MS-SMBD's Negotiation Timer; Windows: 5 s)
 * @accept_timeout_ms: a NEW_CONNECTION not claimed by ACCEPT in this time
 *	is dropped
 * Every *_ms field but @setup_timeout_ms and @credit_timeout_ms is
 * 1..SMBD_MAX_TIMEOUT_MS.
 *
 * SMB2 NEGOTIATE policy (what smbd itself would answer; MS-SMB2 3.3.5.4):
 * @server_guid: ServerGuid (Samba: the lower-case NetBIOS name, NUL-padded)
 * @capabilities: SMB2_GLOBAL_CAP_* the server may grant; the driver keeps
 *	only those the chosen dialect and the client allow
 * @security_mode: SMB2_NEGOTIATE_SIGNING_ENABLED (0x1) and optionally
 *	SMB2_NEGOTIATE_SIGNING_REQUIRED (0x2); no other bits
 * @min_dialect: lowest dialect accepted: 0x0300, 0x0302 or 0x0311 (SMB
 *	Direct needs SMB 3)
 * @max_dialect: highest dialect offered, one of those, >= @min_dialect
 * @max_transact_size: MaxTransactSize of the response (>= 65536)
 * @max_read_size: MaxReadSize of the response (>= 65536)
 * @max_write_size: MaxWriteSize of the response (>= 65536)
 * @policy_flags: SMBD_POLICY_*
 * @cipher_count: entries used in @ciphers (0: no encryption)
 * @signing_algorithm_count: entries used in @signing_algorithms
 * @ciphers: SMB2 cipher ids (1..4) in server preference order, no duplicates;
 *	unused entries must be 0
 * @signing_algorithms: SMB2 signing algorithm ids (0..2) in server
 *	preference order, no duplicates; unused entries must be 0
 * @sec_blob_len: bytes at @sec_blob_ptr (at most SMBD_MAX_SEC_BLOB)
 * @__reserved: must be 0
 * @sec_blob_ptr: the initial security blob (SPNEGO negTokenInit)
 * @setup_timeout_ms: after the MS-SMBD negotiate, the time a connection has
 *	for its SMB2 NEGOTIATE and first SESSION_SETUP (0..SMBD_MAX_TIMEOUT_MS;
 *	0, as callers that predate the field pass: @negotiate_timeout_ms). A
 *	client prepares its session between the two (the Linux client loads
 *	its hash and cipher code), which takes seconds on a loaded machine.
 *	A binding channel has as long again, from its NEW_CHANNEL, for the
 *	owner's signed STATUS_SUCCESS that completes the binding; until then
 *	it keeps the limits of a connection without an owner.
 * @credit_timeout_ms: the time a send may wait for the peer to grant a send
 *	credit before the connection is dropped (MS-SMBD's Send Credit Grant
 *	Timer; Windows: 5 s), and the time the PDU first in a connection's
 *	queue has to go whole, however the peer grants meanwhile
 *	(0..SMBD_MAX_TIMEOUT_MS; 0, as callers that
 *	predate the field pass: @keepalive_timeout_ms). A client grants when
 *	its reader has consumed what it received, which on a loaded machine
 *	takes longer than the 5 s a keepalive answer needs.
 * @out_busy_port: on EADDRINUSE, the RDMA port another listener holds; must
 *	be 0 on input
 * @__reserved2: must be 0
 *
 * The parameters hold while the calling file stays open. The first
 * SET_PARAMS of a master opens the RDMA listeners (see struct smbd_info);
 * when the file closes, they close and the ports are free for another
 * server until SET_PARAMS is called again.
 */
struct smbd_set_params {
	__u32 size;
	__u32 flags;
	__u32 receive_credit_max;
	__u32 send_credit_target;
	__u32 max_send_size;
	__u32 max_receive_size;
	__u32 max_fragmented_size;
	__u32 max_read_write_size;
	__u32 keepalive_interval_ms;
	__u32 keepalive_timeout_ms;
	__u32 negotiate_timeout_ms;
	__u32 accept_timeout_ms;
	__u8 server_guid[SMBD_GUID_SIZE];
	__u32 capabilities;
	__u32 security_mode;
	__u32 min_dialect;
	__u32 max_dialect;
	__u32 max_transact_size;
	__u32 max_read_size;
	__u32 max_write_size;
	__u32 policy_flags;
	__u32 cipher_count;
	__u32 signing_algorithm_count;
	__u16 ciphers[SMBD_MAX_ALGORITHMS];
	__u16 signing_algorithms[SMBD_MAX_ALGORITHMS];
	__u32 sec_blob_len;
	__u32 __reserved;
	__aligned_u64 sec_blob_ptr;
	__u32 setup_timeout_ms;
	__u32 credit_timeout_ms;
	__u32 out_busy_port;
	__u32 __reserved2;
};

#define SMBD_IOC_SET_PARAMS _IO(SMBD_IOCTL_TYPE, SMBD_CMD_SET_PARAMS)

/**
 * struct smbd_listen - SMBD_IOC_LISTEN: ask for NEW_CONNECTION events
 * @size: sizeof(struct smbd_listen)
 * @flags: must be 0
 *
 * Needs CAP_NET_ADMIN; one listening file at a time. A connection whose
 * first SESSION_SETUP does not bind to a registered session is offered to
 * this file as a NEW_CONNECTION event.
 */
struct smbd_listen {
	__u32 size;
	__u32 flags;
};

#define SMBD_IOC_LISTEN _IO(SMBD_IOCTL_TYPE, SMBD_CMD_LISTEN)

/**
 * struct smbd_accept - SMBD_IOC_ACCEPT: claim a NEW_CONNECTION by its token
 * @size: sizeof(struct smbd_accept)
 * @flags: must be 0
 * @token: the token of the NEW_CONNECTION event
 * @out_conn_id: the connection's id on this file
 *
 * Allowed to processes with the same owner (effective uid) as the listening
 * file. On success this file receives a NEW_CHANNEL event for the connection,
 * carrying the NEGOTIATE and SESSION_SETUP bytes.
 */
struct smbd_accept {
	__u32 size;
	__u32 flags;
	__u8 token[SMBD_TOKEN_SIZE];
	__aligned_u64 out_conn_id;
};

#define SMBD_IOC_ACCEPT _IO(SMBD_IOCTL_TYPE, SMBD_CMD_ACCEPT)

/**
 * struct smbd_session - SMBD_IOC_REGISTER_SESSION / _UNREGISTER_SESSION
 * @size: sizeof(struct smbd_session)
 * @flags: must be 0
 * @session_id: SMB2 SessionId owned by this file
 *
 * A binding SESSION_SETUP for a registered SessionId becomes a NEW_CHANNEL
 * event on the registering file. Closing the file unregisters its sessions.
 * SessionId 0 is invalid. Only the master's user or a holder of
 * CAP_NET_ADMIN may register (EPERM, before the sessions are looked up).
 * Registering a session this file already holds succeeds; one held by
 * another file fails with EBUSY; one more than out_max_sessions on this
 * file with ENOSPC. Unregistering a session this file does not hold fails
 * with ENOENT.
 */
struct smbd_session {
	__u32 size;
	__u32 flags;
	__aligned_u64 session_id;
};

#define SMBD_IOC_REGISTER_SESSION \
	_IO(SMBD_IOCTL_TYPE, SMBD_CMD_REGISTER_SESSION)
#define SMBD_IOC_UNREGISTER_SESSION \
	_IO(SMBD_IOCTL_TYPE, SMBD_CMD_UNREGISTER_SESSION)

/**
 * struct smbd_mem_params - SMBD_IOC_GET_MEM_PARAMS: this file's buffer pool
 * @size: sizeof(struct smbd_mem_params)
 * @flags: must be 0
 * @out_buffer_count: buffers in the pool
 * @out_buffer_size: bytes per buffer; buffer i starts at i * out_buffer_size
 * @out_mmap_size: length to pass to mmap()
 * @out_mmap_offset: offset to pass to mmap()
 * @buffer_count: buffers the pool is to have (SMBD_FEATURE_POOL_SIZE;
 *	1..smbd_info.out_pool_buffers), or 0: the pool as it is, or
 *	out_pool_buffers if there is none yet. EBUSY if the pool is there
 *	with another count: the first GET_MEM_PARAMS or mmap() sizes it.
 * @__reserved: must be 0
 *
 * The pool is allocated at the first GET_MEM_PARAMS or mmap() of the file,
 * zeroed and charged to the caller's memory cgroup (ENOMEM if it cannot
 * be); a first mmap() or RDMA_RW allocates smbd_info.out_pool_buffers
 * buffers. mmap()
 * must be MAP_SHARED with exactly @out_mmap_offset and @out_mmap_size
 * (EINVAL otherwise), by the process that opened the file
 * (EBADFD otherwise); the mapping is not inherited by fork() (VM_DONTCOPY)
 * and cannot grow (VM_DONTEXPAND). A child that inherits it anyway, after
 * MADV_DOFORK, gets SIGBUS when it touches it. Every mapping of the file
 * shows the same pages; they stay valid until unmapped, even after the file
 * descriptor is closed. RDMA_RW slices name buffers by index.
 */
struct smbd_mem_params {
	__u32 size;
	__u32 flags;
	__u32 out_buffer_count;
	__u32 out_buffer_size;
	__aligned_u64 out_mmap_size;
	__aligned_u64 out_mmap_offset;
	__u32 buffer_count;
	__u32 __reserved;
};

#define SMBD_IOC_GET_MEM_PARAMS _IO(SMBD_IOCTL_TYPE, SMBD_CMD_GET_MEM_PARAMS)

/* smbd_event.type */
#define SMBD_EVENT_NEW_CONNECTION 1	/* to the LISTEN file: claim by token */
#define SMBD_EVENT_NEW_CHANNEL 2	/* a connection now owned by this file */
#define SMBD_EVENT_PDU_RECEIVED 3	/* a reassembled SMB2 PDU */
#define SMBD_EVENT_SEND_DONE 4		/* a SEND_PDU entry with SMBD_SEND_NOTIFY */
#define SMBD_EVENT_RDMA_DONE 5		/* an RDMA_RW operation finished */
#define SMBD_EVENT_DISCONNECTED 6	/* the connection is gone (reason) */
#define SMBD_EVENT_OVERFLOW 7		/* events were lost (count) */
#define SMBD_EVENT_SEND_ROOM 8		/* a full send queue has room again */

/* smbd_event.flags for NEW_CHANNEL */
#define SMBD_CHANNEL_BOUND (1U << 0)	/* binding SESSION_SETUP (flow 1) */
#define SMBD_CHANNEL_ACCEPTED (1U << 1)	/* claimed with ACCEPT (flow 2) */

/*
 * smbd_event.u.disconnected.reason: X(NAME, value, name) gives
 * SMBD_REASON_NAME and the name the driver counts it under
 * (counters/disconnect_<name>) and libsmbd prints. A value is never reused;
 * a new reason takes the next one. SMBD_REASON_NONE (0) is never reported.
 * The reasons are enumerators, not macros: compare them, do not #ifdef them.
 */
#define SMBD_REASONS(X) \
	X(LOCAL, 1, local)			/* DISCONNECT ioctl */ \
	X(PEER, 2, peer)			/* the peer disconnected */ \
	X(OWNER_CLOSED, 3, owner_closed)	/* the owning file was closed */ \
	X(DEVICE_REMOVED, 4, device_removed)	/* the RDMA device went away */ \
	X(NEGOTIATE_TIMEOUT, 5, negotiate_timeout) /* no negotiate in time */ \
	X(KEEPALIVE_TIMEOUT, 6, keepalive_timeout) /* no answer to a keepalive */ \
	X(ACCEPT_TIMEOUT, 7, accept_timeout)	/* NEW_CONNECTION never claimed */ \
	X(CREDIT_TIMEOUT, 8, credit_timeout)	/* the peer never granted credits */ \
	X(BAD_NEGOTIATE, 9, bad_negotiate)	/* invalid MS-SMBD negotiate */ \
	X(BAD_MESSAGE, 10, bad_message)		/* invalid data transfer header */ \
	X(BAD_REASSEMBLY, 11, bad_reassembly)	/* fragments inconsistent or too big */ \
	X(CREDIT_VIOLATION, 12, credit_violation) /* sent without credits, overflow */ \
	X(BAD_SMB2, 13, bad_smb2)		/* invalid SMB2 NEGOTIATE/SESSION_SETUP */ \
	X(UNKNOWN_SESSION, 14, unknown_session)	/* binding to an unregistered session */ \
	X(NO_LISTENER, 15, no_listener)		/* new session and nobody listening */ \
	X(RDMA_ERROR, 16, rdma_error)		/* work completion or CM error */ \
	X(NO_MEMORY, 17, no_memory)		/* resources exhausted */ \
	X(SETUP_TIMEOUT, 18, setup_timeout)	/* no session setup or bind done in time */ \
	X(EVICTED, 19, evicted)			/* its setup slot went to a newer peer */

#define SMBD_REASON_ENUM_(name, value, text) SMBD_REASON_##name = value,
enum { SMBD_REASONS(SMBD_REASON_ENUM_) SMBD_REASON_NONE = 0 };
#undef SMBD_REASON_ENUM_

/**
 * struct smbd_sockaddr - an IPv4 or IPv6 endpoint
 * @family: AF_INET or AF_INET6
 * @port: port in host byte order
 * @scope_id: IPv6 scope id, 0 for IPv4
 * @addr: 4 bytes (IPv4) or 16 bytes (IPv6) in network byte order
 */
struct smbd_sockaddr {
	__u16 family;
	__u16 port;
	__u32 scope_id;
	__u8 addr[16];
};

/**
 * struct smbd_event - one record filled by SMBD_IOC_GET_EVENTS
 * @type: SMBD_EVENT_*
 * @flags: per type (SMBD_CHANNEL_*)
 * @conn_id: the connection: its id on this file (the same number in
 *	NEW_CONNECTION, where no file owns it yet, and in ACCEPT); 0 for
 *	OVERFLOW
 * @user_data: SEND_DONE, RDMA_DONE: the user_data of the request
 * @status: SEND_DONE, RDMA_DONE: 0 or a negative errno
 * @data_len: bytes of this event's data in the GET_EVENTS data area
 * @data_offset: where they start in the data area
 * @u: per-type fields
 *
 * Data: PDU_RECEIVED carries the PDU; NEW_CHANNEL carries the SMB2 NEGOTIATE
 * request, the driver's NEGOTIATE response and the first SESSION_SETUP
 * request, back to back, with the lengths in @u.new_channel.
 *
 * NEW_CHANNEL's @u.new_channel.max_pdu_size is the largest PDU SEND_PDU
 * takes on the connection: the peer's MaxFragmentedSize (at most
 * out_max_pdu_size), which bounds every response, a compound's as a
 * whole. A kernel before this field leaves it 0 and refuses the same.
 */
struct smbd_event {
	__u32 type;
	__u32 flags;
	__aligned_u64 conn_id;
	__aligned_u64 user_data;
	__s32 status;
	__u32 data_len;
	__aligned_u64 data_offset;
	union {
		struct {
			__u8 token[SMBD_TOKEN_SIZE];
			__u8 client_guid[SMBD_GUID_SIZE];
			struct smbd_sockaddr local;
			struct smbd_sockaddr remote;
		} new_connection;
		struct {
			__aligned_u64 session_id;
			__u32 negotiate_req_len;
			__u32 negotiate_resp_len;
			__u32 session_setup_len;
			__u32 dialect;
			struct smbd_sockaddr local;
			struct smbd_sockaddr remote;
			__u32 max_pdu_size;
			__u32 __reserved;
		} new_channel;
		struct {
			__u32 reason;
			__u32 __reserved;
		} disconnected;
		struct {
			__aligned_u64 bytes;
		} rdma_done;
		struct {
			__aligned_u64 lost;
		} overflow;
		__u8 __reserved[88];
	} u;
};

/**
 * struct smbd_get_events - SMBD_IOC_GET_EVENTS: fetch a batch of events
 * @size: sizeof(struct smbd_get_events)
 * @flags: must be 0
 * @max_events: capacity of @events_ptr in entries (1..out_max_batch)
 * @event_size: sizeof(struct smbd_event) as the caller knows it,
 *	SMBD_EVENT_SIZE_V1..SMBD_MAX_ELEMENT_SIZE; bytes past the kernel's
 *	struct are zeroed
 * @events_ptr: array of struct smbd_event
 * @data_ptr: area the event data (PDUs, NEGOTIATE bytes) is copied into
 * @data_len: bytes available at @data_ptr
 * @out_count: events filled
 * @out_data_used: bytes of @data_ptr used; with EMSGSIZE, bytes needed
 * @__reserved: must be 0
 *
 * Blocks until at least one event is queued unless the file is O_NONBLOCK.
 * An event's data never spans two calls: if it does not fit, the call
 * returns the events before it. Each event's data starts 8-byte aligned.
 * Events of one connection keep their order; DISCONNECTED is its last.
 * When out_max_events SEND_DONE and NEW_CONNECTION events are queued,
 * further ones are lost and counted in an OVERFLOW record at the head of
 * the next batch: a caller that asks for more SEND_DONE notifications than
 * it reads may lose some this way. Every other event is always queued,
 * bounded where it comes from: a connection stops granting credits while
 * its PDUs are unread, RDMA_DONE is bounded by RDMA_RW, and a connection
 * has one NEW_CHANNEL, at most one SEND_ROOM queued and one DISCONNECTED.
 * A full queue costs no connection its PDUs.
 */
struct smbd_get_events {
	__u32 size;
	__u32 flags;
	__u32 max_events;
	__u32 event_size;
	__aligned_u64 events_ptr;
	__aligned_u64 data_ptr;
	__u32 data_len;
	__u32 out_count;
	__u32 out_data_used;
	__u32 __reserved;
};

#define SMBD_IOC_GET_EVENTS _IO(SMBD_IOCTL_TYPE, SMBD_CMD_GET_EVENTS)

/**
 * struct smbd_iovec - a piece of user memory
 * @base: address
 * @len: bytes
 */
struct smbd_iovec {
	__aligned_u64 base;
	__aligned_u64 len;
};

/* smbd_send_entry.flags */
#define SMBD_SEND_NOTIFY (1U << 0)	/* queue SEND_DONE when sent */
#define SMBD_SEND_INVALIDATE (1U << 1)	/* send with invalidate of the token */

/**
 * struct smbd_send_entry - one PDU of SMBD_IOC_SEND_PDU
 * @conn_id: connection owned by this file
 * @user_data: echoed in SEND_DONE
 * @iov_ptr: array of struct smbd_iovec forming the PDU (no length prefix)
 * @iov_count: entries at @iov_ptr (1..out_max_iovs); the PDU is their
 *	concatenation, 1..MaxFragmentedSize bytes (the peer's limit)
 * @flags: SMBD_SEND_*
 * @invalidate_token: remote token (SMB2 Buffer Descriptor V1 Token) to
 *	invalidate with the PDU's first message; needs SMBD_SEND_INVALIDATE
 * @__reserved: must be 0
 */
struct smbd_send_entry {
	__aligned_u64 conn_id;
	__aligned_u64 user_data;
	__aligned_u64 iov_ptr;
	__u32 iov_count;
	__u32 flags;
	__u32 invalidate_token;
	__u32 __reserved;
};

/**
 * struct smbd_send_pdu - SMBD_IOC_SEND_PDU: send a batch of PDUs
 * @size: sizeof(struct smbd_send_pdu)
 * @flags: must be 0
 * @count: entries at @entries_ptr (1..out_max_batch)
 * @entry_size: sizeof(struct smbd_send_entry) as the caller knows it,
 *	SMBD_SEND_ENTRY_SIZE_V1..SMBD_MAX_ELEMENT_SIZE
 * @entries_ptr: array of struct smbd_send_entry
 * @out_done: entries accepted
 * @__reserved: must be 0
 *
 * The PDU bytes are copied before the call returns; the caller may reuse its
 * memory at once. PDUs of one connection go out in order.
 *
 * A connection holds at most out_send_queue_bytes of PDUs (and RDMA_RW
 * replies) accepted and not yet sent and completed, as a socket its send
 * buffer: a PDU that would pass that bound fails with EAGAIN, unless the
 * connection holds none (so any PDU up to MaxFragmentedSize goes). A
 * SEND_ROOM event for the connection follows once at most half the bound
 * is held; send the rest then, in order. A connection has one SEND_ROOM
 * queued at a time: one read after a refusal may have been queued before
 * it, and the retry it prompts may be refused again, which queues the
 * next. A closing connection refuses with ENOTCONN instead. A peer that grants no credits
 * keeps the queue full: the connection ends with SMBD_REASON_CREDIT_TIMEOUT
 * when the PDU first in it does not go whole in credit_timeout_ms. The
 * copies are charged to the caller's memory cgroup; ENOMEM when its limit
 * is reached.
 */
struct smbd_send_pdu {
	__u32 size;
	__u32 flags;
	__u32 count;
	__u32 entry_size;
	__aligned_u64 entries_ptr;
	__u32 out_done;
	__u32 __reserved;
};

#define SMBD_IOC_SEND_PDU _IO(SMBD_IOCTL_TYPE, SMBD_CMD_SEND_PDU)

/**
 * struct smbd_slice - a piece of a pool buffer
 * @buffer: buffer index (0..out_buffer_count-1)
 * @offset: byte offset in the buffer
 * @length: bytes; offset + length must not pass the buffer's end
 * @__reserved: must be 0
 */
struct smbd_slice {
	__u32 buffer;
	__u32 offset;
	__u32 length;
	__u32 __reserved;
};

/* smbd_rw_op.direction */
#define SMBD_RW_WRITE_TO_PEER 1		/* RDMA WRITE: serves an SMB2 READ */
#define SMBD_RW_READ_FROM_PEER 2	/* RDMA READ: serves an SMB2 WRITE */

/**
 * struct smbd_rw_op - one operation of SMBD_IOC_RDMA_RW
 * @conn_id: connection owned by this file
 * @user_data: echoed in RDMA_DONE
 * @slices_ptr: array of struct smbd_slice, the local side in order
 * @descs_ptr: SMB2 Buffer Descriptor V1 entries exactly as they appear in
 *	the SMB2 READ/WRITE request (16 bytes each, little-endian)
 * @slice_count: entries at @slices_ptr (1..out_max_slices)
 * @desc_count: entries at @descs_ptr (1..out_max_descriptors)
 * @direction: SMBD_RW_*
 * @__reserved: must be 0
 * @reply_ptr: 0, or (SMBD_FEATURE_RW_REPLY, SMBD_RW_WRITE_TO_PEER only) a
 *	struct smbd_send_entry for the same connection: the SMB2 READ
 *	response, sent behind the RDMA WRITE without waiting for it
 * @reply_size: sizeof(struct smbd_send_entry) as the caller knows it, as
 *	SEND_PDU's entry_size; 0 without @reply_ptr
 * @__reserved2: must be 0
 *
 * Moves min(sum of slices, sum of descriptors) bytes, descriptor by
 * descriptor: each descriptor takes the next min(its Length, bytes left)
 * bytes of the slices, so a descriptor longer than the data is fine and
 * descriptors past the data are not touched. Slices lie inside one buffer
 * each and do not overlap; descriptors are not empty and do not wrap
 * (EINVAL). The slices may total at most the connection's negotiated
 * MaxReadWriteSize (EMSGSIZE); EMSGSIZE too for an operation that needs
 * more work requests than the connection's queue pair has for RDMA (slices
 * that break pages in many places; whole pages never do).
 *
 * The operation ends with one RDMA_DONE event: status 0 and
 * u.rdma_done.bytes, or a negative errno and 0 bytes: -EIO when the RDMA
 * operation failed (a wrong token, a descriptor longer than the peer's
 * registration), after which the connection is disconnected with
 * SMBD_REASON_RDMA_ERROR as MS-SMBD requires; -ENOTCONN when the
 * connection went away before the operation finished or started; -ENOMEM
 * or -EINVAL when the device could not map or register the memory (the
 * connection stays). RDMA_DONE events are never dropped for a full queue,
 * and come before the connection's DISCONNECTED. The pool pages stay in
 * use until RDMA_DONE; the client's memory too, so send the SMB2 response
 * only after it, or let the kernel send it with the operation (@reply_ptr).
 *
 * A reply is checked and copied like a SEND_PDU entry before the call
 * returns (the errors of SEND_PDU; SMBD_SEND_NOTIFY is refused, RDMA_DONE
 * tells), and queued behind the connection's PDUs once the operation's
 * work requests are posted: a reliable connection delivers a SEND after
 * the RDMA WRITEs posted before it on the queue pair (InfiniBand, RoCE and
 * iWARP alike), so the client sees the data before the response, one wait
 * sooner than through RDMA_DONE (Linux's NFS server answers RDMA reads the
 * same way). Until then PDUs
 * of later SEND_PDUs may overtake it. An operation that could not be
 * posted sends no reply: its RDMA_DONE has -ENOMEM or -EINVAL and the
 * connection stays, so answer the request another way. With status 0 the
 * reply was queued before the RDMA_DONE, unless the connection was
 * already ending (a failure, or DISCONNECT before the operation was
 * posted): then DISCONNECTED follows.
 */
struct smbd_rw_op {
	__aligned_u64 conn_id;
	__aligned_u64 user_data;
	__aligned_u64 slices_ptr;
	__aligned_u64 descs_ptr;
	__u32 slice_count;
	__u32 desc_count;
	__u32 direction;
	__u32 __reserved;
	__aligned_u64 reply_ptr;
	__u32 reply_size;
	__u32 __reserved2;
};

/**
 * struct smbd_rdma_rw - SMBD_IOC_RDMA_RW: start a batch of RDMA operations
 * @size: sizeof(struct smbd_rdma_rw)
 * @flags: must be 0
 * @count: entries at @ops_ptr (1..out_max_batch)
 * @op_size: sizeof(struct smbd_rw_op) as the caller knows it,
 *	SMBD_RW_OP_SIZE_V1..SMBD_MAX_ELEMENT_SIZE; bytes past the kernel's
 *	struct must be 0 (E2BIG)
 * @ops_ptr: array of struct smbd_rw_op
 * @out_done: operations started (each ends with one RDMA_DONE event)
 * @__reserved: must be 0
 *
 * Operations start in order; one that finds the connection's share of the
 * queue pair busy waits in the kernel, in order, until earlier ones
 * complete. The batch stops at the first operation that cannot start: the
 * call returns 0 with @out_done < @count if some did, else that
 * operation's error (ENOENT: not a connection of this file; ENOTCONN: it
 * is disconnecting or DISCONNECT was called; EAGAIN: out_max_events
 * operations of this file are in flight or have an RDMA_DONE not yet
 * read; ENOBUFS: its reply does not fit its connection's send queue, see
 * struct smbd_send_pdu). The pool is allocated by the first RDMA_RW if GET_MEM_PARAMS or
 * mmap() did not do it yet.
 */
struct smbd_rdma_rw {
	__u32 size;
	__u32 flags;
	__u32 count;
	__u32 op_size;
	__aligned_u64 ops_ptr;
	__u32 out_done;
	__u32 __reserved;
};

#define SMBD_IOC_RDMA_RW _IO(SMBD_IOCTL_TYPE, SMBD_CMD_RDMA_RW)

/**
 * struct smbd_disconnect - SMBD_IOC_DISCONNECT: drop one connection
 * @size: sizeof(struct smbd_disconnect)
 * @flags: must be 0
 * @conn_id: connection owned by this file
 *
 * Like closing a socket: PDUs already accepted by SEND_PDU go out first,
 * later SEND_PDUs fail with ENOTCONN, and a DISCONNECTED event with
 * SMBD_REASON_LOCAL follows once the connection's outstanding operations
 * are drained (with a timeout reason instead if the peer stops granting
 * credits meanwhile). A second DISCONNECT changes nothing.
 */
struct smbd_disconnect {
	__u32 size;
	__u32 flags;
	__aligned_u64 conn_id;
};

#define SMBD_IOC_DISCONNECT _IO(SMBD_IOCTL_TYPE, SMBD_CMD_DISCONNECT)

/**
 * struct smbd_conn_stats - SMBD_IOC_CONN_STATS: what one connection carried
 * @size: sizeof(struct smbd_conn_stats)
 * @flags: must be 0
 * @conn_id: a connection this file owns; with CAP_NET_ADMIN, any the
 *	driver holds (smbstatus reads the channels of every smbd)
 * @out_pdus_received: SMB2 PDUs reassembled from the peer's messages
 * @out_bytes_received: their bytes
 * @out_pdus_sent: PDUs sent, counted when their last send completed
 * @out_bytes_sent: their bytes
 * @out_keepalives_sent: keepalives sent: empty messages that ask for the
 *	peer's response after its silence ([MS-SMBD] 3.1.6.2)
 * @out_credit_stalls: times a send waited for the peer's credits
 * @out_rdma_reads: RDMA READs completed (they serve SMB2 WRITEs)
 * @out_rdma_writes: RDMA WRITEs completed (they serve SMB2 READs)
 * @out_rdma_read_bytes: bytes the RDMA READs moved
 * @out_rdma_write_bytes: bytes the RDMA WRITEs moved
 * @out_rdma_errors: RDMA operations that failed
 *
 * The counters are those the driver's debugfs shows for the connection;
 * they only grow while it lives.
 */
struct smbd_conn_stats {
	__u32 size;
	__u32 flags;
	__aligned_u64 conn_id;
	__aligned_u64 out_pdus_received;
	__aligned_u64 out_bytes_received;
	__aligned_u64 out_pdus_sent;
	__aligned_u64 out_bytes_sent;
	__aligned_u64 out_keepalives_sent;
	__aligned_u64 out_credit_stalls;
	__aligned_u64 out_rdma_reads;
	__aligned_u64 out_rdma_writes;
	__aligned_u64 out_rdma_read_bytes;
	__aligned_u64 out_rdma_write_bytes;
	__aligned_u64 out_rdma_errors;
};

#define SMBD_IOC_CONN_STATS _IO(SMBD_IOCTL_TYPE, SMBD_CMD_CONN_STATS)

#endif /* _UAPI_LINUX_SMBD_H */
