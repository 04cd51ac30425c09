/* SPDX-License-Identifier: GPL-2.0-only */
/* smbdirect.ko internals shared between its files. */
#ifndef SMBDIRECT_H
#define SMBDIRECT_H

#include <linux/bits.h>
#include <linux/fs.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/smbd.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "credits.h"
#include "data_transfer.h"
#include "negotiate.h"
#include "smb2.h"
#include "stats.h"

/* Limits reported by GET_INFO and enforced by the commands. */
#define SMBD_EVENT_QUEUE_LEN 1024
#define SMBD_MAX_BATCH 64
#define SMBD_MAX_PDU_SIZE (16U << 20)	/* SMB2 LARGE_MTU bound */
#define SMBD_MAX_SLICES 256
#define SMBD_MAX_DESCRIPTORS 64
#define SMBD_MAX_IOVS 16
#define SMBD_MAX_SESSIONS 4096	/* registered per file */
/*
 * Bytes of SEND_PDU copies and RDMA_RW replies a connection holds until
 * they are sent: far more than a peer's credits carry in flight (255 of
 * 8 KiB for Windows), so a peer that reads keeps it from filling.
 */
#define SMBD_SEND_QUEUE_BYTES (4U << 20)

/*
 * RDMA READ/WRITE: rdma_rw operations in flight per connection, at least
 * (more where one transfer of max_read_write_size needs it, rw.c)
 */
#define SMBD_RW_OPS_BUDGET 256
/* latency histogram: bucket 0 < 16 us, bucket i < 16 << i us, last: more */
#define SMBD_LAT_BUCKETS 16

/* Engine limits: memory per connection stays bounded whatever SET_PARAMS. */
#define SMBD_MAX_IO_SIZE 65536		/* max send / receive size */
#define SMBD_MAX_CREDITS 1024		/* receives posted, send slots */
#define SMBD_CONN_MAX_QUEUED 64		/* unread PDUs before credits stop */
#define SMBD_MIN_QUEUE_DEPTH 8		/* a device with less is refused */
/* an iWARP QP that failed waits this long for the CM to say why (conn.c) */
#define SMBD_QP_FAILED_GRACE_MS 2000
/*
 * Before a connection has an owner, nobody has authenticated its peer: its
 * PDUs may be at most SMBD_MAX_SETUP_PDU (smb2.h; a NEGOTIATE is small, a
 * SESSION_SETUP's security buffer at most 64 KiB), it gets no new credits
 * once SMBD_MAX_SETUP_HELD are held (so it holds what the credits it has
 * carry), and only SMBD_MAX_SETUP_CONNS connections are in that phase, at
 * most SMBD_MAX_SETUP_PER_SOURCE from one source (admission.c).
 */
#define SMBD_MAX_SETUP_HELD 2
#define SMBD_MAX_SETUP_CONNS 64
#define SMBD_MAX_SETUP_PER_SOURCE 16
#define SMBD_SMB2_RESP_MAX (SMBD_MAX_SEC_BLOB + 1024)

/* Module parameters (main.c). */
extern unsigned int smbd_ib_port;
extern unsigned int smbd_iwarp_port;
extern bool smbd_ib_on_iwarp_port;
extern unsigned int smbd_pool_buffers;
extern unsigned int smbd_buffer_size;

extern struct workqueue_struct *smbd_wq;

/* SET_PARAMS as the connections use it; shared, immutable once built. */
struct smbd_params {
	struct kref ref;
	struct smbd_local_params local;
	u32 keepalive_interval_ms;
	u32 keepalive_timeout_ms;
	u32 negotiate_timeout_ms;
	u32 setup_timeout_ms;
	u32 accept_timeout_ms;
	u32 credit_timeout_ms;
	struct smb2_negotiate_policy policy;	/* sec_blob points at blob */
	u8 blob[];
};

/* One open /dev/smbd. */
struct smbd_file {
	struct kref ref;
	kuid_t owner;			/* euid of the opener */
	pid_t owner_tgid;		/* the opening process, for smbdctl */
	struct mm_struct *mm;		/* the opener's, the only one served */
	struct mutex read_mutex;	/* one GET_EVENTS at a time */
	spinlock_t lock;		/* events, nr_events, nr_droppable, lost, closing */
	struct list_head events;
	unsigned int nr_events;
	unsigned int nr_droppable;	/* SEND_DONE, NEW_CONNECTION queued */
	u64 lost;
	bool closing;
	wait_queue_head_t wait;
	struct xarray conns;		/* id -> smbd_conn, one reference each */
	struct mutex pool_lock;		/* allocation of the pool */
	struct page **pool_pages;	/* pool.c */
	unsigned long pool_nr_pages;
	u32 pool_buffers;		/* its buffers, once allocated */
	/* RDMA operations started whose RDMA_DONE is not read yet */
	atomic_t rw_outstanding;
	unsigned int nr_sessions;	/* registered; under smbd_lock */
};

/*
 * A connection's life, in order; conn.c's smbd_conn_enter_locked() says
 * which state may follow which. Every state before OWNED is unauthenticated
 * (holding a slot of admission.c, under the setup limits), and so is an
 * OWNED binding until its owner confirms it (routing.c).
 */
enum smbd_conn_state {
	SMBD_CONN_ACCEPTING,		/* accepted; the CM's ESTABLISHED is due */
	SMBD_CONN_NEGOTIATE,		/* waiting for the MS-SMBD negotiate */
	SMBD_CONN_SMB2_NEGOTIATE,	/* waiting for the SMB2 NEGOTIATE */
	SMBD_CONN_SESSION_SETUP,	/* waiting for the first SESSION_SETUP */
	SMBD_CONN_REFUSED,		/* an SMB2 error is the last answer */
	SMBD_CONN_OFFERED,		/* NEW_CONNECTION waits for ACCEPT */
	SMBD_CONN_OWNED,		/* PDUs go to the owning file */
	SMBD_CONN_CLOSING,		/* DISCONNECT: queued PDUs go, no more */
	SMBD_CONN_DISCONNECTING,	/* failed or closed; teardown queued */
	SMBD_CONN_NR_STATES
};

#define SMBD_CONN_BEFORE_NEGOTIATE \
	(BIT(SMBD_CONN_ACCEPTING) | BIT(SMBD_CONN_NEGOTIATE))
#define SMBD_CONN_UNOWNED \
	(SMBD_CONN_BEFORE_NEGOTIATE | BIT(SMBD_CONN_SMB2_NEGOTIATE) | \
	 BIT(SMBD_CONN_SESSION_SETUP) | BIT(SMBD_CONN_REFUSED) | \
	 BIT(SMBD_CONN_OFFERED))
#define SMBD_CONN_HAS_OWNER (BIT(SMBD_CONN_OWNED) | BIT(SMBD_CONN_CLOSING))

/* Whether @state is one of @states (a mask of the above). */
static inline bool smbd_conn_state_in(enum smbd_conn_state state, u32 states)
{
	return BIT(state) & states;
}

enum smbd_keepalive {
	SMBD_KEEPALIVE_NONE,
	SMBD_KEEPALIVE_PENDING,		/* next message requests a response */
	SMBD_KEEPALIVE_SENT,		/* waiting for any message */
};

struct smbd_conn;
struct smbd_kevent;
struct seq_file;

struct smbd_recv_io {
	struct ib_cqe cqe;
	struct smbd_conn *conn;
	struct list_head node;		/* conn->rx.free */
	u8 *buf;
	u64 dma;
	u32 len;			/* bytes received */
};

struct smbd_send_io {
	struct ib_cqe cqe;
	struct smbd_conn *conn;
	struct list_head node;		/* conn->tx.free */
	struct smbd_pdu_out *pdu;	/* set on a PDU's last message */
	bool keepalive;			/* requests a response */
	u8 *buf;
	u64 dma;
};

/* One source of connections, as admission.c counts its share. */
struct smbd_source {
	u16 family;
	u32 scope_id;
	u8 addr[16];
};

/* An event queued on a file (events.c). */
struct smbd_kevent {
	struct list_head node;
	struct smbd_event ev;
	void *data;			/* kvmalloc'd, ev.data_len bytes */
	/* when freed, read or not (a PDU's connection takes back its room) */
	void (*release)(struct smbd_kevent *kev);
	void *release_arg;
	bool embedded;			/* part of its connection: not freed */
};

/* A PDU to send: SEND_PDU's copy or the driver's own SMB2 response. */
struct smbd_pdu_out {
	struct list_head node;
	u8 *data;
	u32 len;
	u32 next_frag;
	struct smbd_frag_plan plan;
	u32 flags;			/* SMBD_SEND_* */
	u32 invalidate_token;
	u64 user_data;
	u32 final_reason;		/* disconnect once sent (SMBD_REASON_*) */
	u32 charged;			/* bytes of the send queue's bound it holds */
};

struct smbd_conn {
	struct kref ref;
	u32 id;
	struct smbd_params *params;
	struct rdma_cm_id *cm_id;
	struct ib_pd *pd;
	struct ib_cq *cq;
	const char *transport;		/* "ib", "roce" or "iwarp" */
	bool iwarp;			/* READs register; failures wait for the CM */
	struct smbd_sockaddr local;
	struct smbd_sockaddr remote;
	struct smbd_local_params lp;	/* params->local, credits within the device's */

	/* conn.c: the life; the lock covers everything below unless said */
	spinlock_t lock;
	enum smbd_conn_state state;	/* changed by smbd_conn_enter_locked() */
	u32 reason;			/* first SMBD_REASON_* */
	bool let_sends_finish;		/* teardown waits for posted sends and RDMA */
	struct smbd_conn_params cp;
	struct smbd_credits credits;
	enum smbd_keepalive keepalive;
	unsigned long deadline;		/* negotiate/accept, or keepalive */
	unsigned long qp_failed_since;	/* jiffies; 0: the QP works (iWARP) */
	const char *qp_failure;		/* static text: what failed */
	struct work_struct disconnect_work;
	struct delayed_work timer_work;
	struct completion done;		/* teardown finished */

	/* recv.c: receives, reassembly and the PDUs not read yet */
	struct {
		struct smbd_recv_io *ios;
		u32 nr_ios;
		struct list_head free;
		struct smbd_recv_io *early_negotiate;	/* before ESTABLISHED */
		bool spare_posted;	/* one receive beyond the credits */
		u32 pdus_queued;	/* PDU events not read by the owner */
		u64 queued_bytes;	/* of those and the held ones */
		struct list_head held;	/* PDU_RECEIVED smbd_kevents, no owner yet */
		u32 nr_held;
		bool to_owner;		/* owned, nothing held: PDUs go straight on */
		/* only the receive completion touches these */
		struct smbd_reassembly reasm;
		u8 *pdu;
	} rx;

	/* send.c: messages and the PDUs queued to go */
	struct {
		struct smbd_send_io *ios;
		u32 nr_ios;
		struct list_head free;
		struct list_head queue;		/* smbd_pdu_out */
		u32 posted;
		wait_queue_head_t wait;		/* posted sends or RDMA completed */
		bool message_due;	/* a message goes even without a PDU */
		unsigned long stall_since;	/* jiffies; 0: not waiting for credits */
		unsigned long head_since;	/* jiffies the first PDU got first; 0: none */
		/* SEND_PDU's copies and replies held, up to SMBD_SEND_QUEUE_BYTES */
		u32 charged;
		bool want_room;		/* refused one: SEND_ROOM when there is room */
		bool room_queued;	/* room_ev is on the owner's queue */
		struct smbd_kevent room_ev;
		struct work_struct work;
	} tx;

	/*
	 * rw.c: RDMA READ/WRITE. Sized at creation, so that an ioctl can cost
	 * an operation without touching the QP: the budget and what rdma_rw
	 * makes of a scatterlist.
	 */
	struct {
		struct rw_semaphore sem;	/* QP use outside the lock vs teardown */
		u32 ops_max;			/* the QP's rdma_rw budget */
		u32 write_sge;			/* SGEs of an RDMA WRITE */
		u32 read_sge;			/* SGEs of an RDMA READ */
		u32 mr_pages;			/* pages per registration; 0: none */
		u32 ops_free;
		struct list_head pending;	/* waiting for budget, in order */
		bool posting;			/* someone posts from pending */
		struct list_head posted;	/* posted, completion due */
		struct work_struct work;
	} rw;

	/*
	 * routing.c and smb2.c: the SMB2 the driver answered (written by
	 * smb2_work alone, read once it routed) and who owns the connection
	 * (set under smbd_lock and conn->lock at adoption, then fixed)
	 */
	struct {
		struct smbd_file *owner;
		struct list_head offer_node;
		u8 token[SMBD_TOKEN_SIZE];
		u8 client_guid[SMBD_GUID_SIZE];
		u16 dialect;
		u64 session_id;
		u8 *neg_req;
		u8 *neg_resp;
		u8 *setup_bytes;	/* NEGOTIATE req, resp, SESSION_SETUP */
		u32 neg_req_len;
		u32 neg_resp_len;
		u32 setup_len;
		struct smbd_kevent *disconnected_ev;	/* for the owner, from adoption */
		struct work_struct smb2_work;
		/*
		 * bound, the binding not completed yet: still one of the
		 * unauthenticated (lock; read locklessly on the receive path)
		 */
		bool unconfirmed;
	} route;

	/* admission.c: its slot while it has no owner (smbd_setup_lock) */
	struct {
		struct list_head node;	/* empty: no slot */
		bool ready;		/* accepted: may be evicted */
		struct smbd_source source;	/* whose share it takes */
	} setup;

	/* what this connection carried, for smbdctl */
	struct {
		u64 pdus_received;
		u64 bytes_received;
		u64 pdus_sent;
		u64 bytes_sent;
		u64 keepalives_sent;
		u64 credit_stalls;
		u64 rdma_reads;		/* RDMA READs that completed */
		u64 rdma_writes;
		u64 rdma_read_bytes;
		u64 rdma_write_bytes;
		u64 rdma_errors;	/* operations that failed */
		u32 rdma_inflight;	/* submitted, RDMA_DONE not yet queued */
		u64 rdma_lat[SMBD_LAT_BUCKETS];
	} stats;
};

/* Messages about one connection; a peer decides how often they come. */
#define smbd_conn_warn(conn, fmt, ...) \
	pr_warn_ratelimited("connection %u: " fmt, (conn)->id, ##__VA_ARGS__)
#define smbd_conn_info(conn, fmt, ...) \
	pr_info_ratelimited("connection %u: " fmt, (conn)->id, ##__VA_ARGS__)
#define smbd_conn_dbg(conn, fmt, ...) \
	pr_debug("connection %u: " fmt, (conn)->id, ##__VA_ARGS__)

/* The QP takes new work: no teardown, and no failure the CM may yet name. */
static inline bool smbd_conn_qp_usable_locked(const struct smbd_conn *conn)
{
	lockdep_assert_held(&conn->lock);
	return conn->state != SMBD_CONN_DISCONNECTING && !conn->qp_failed_since;
}

/* The connection under @conn_id in @xa, with a reference; NULL if none. */
static inline struct smbd_conn *smbd_conns_get(struct xarray *xa, u64 conn_id)
{
	struct smbd_conn *conn;

	if (conn_id == 0 || conn_id > U32_MAX)
		return NULL;
	xa_lock(xa);
	conn = xa_load(xa, conn_id);
	if (conn)
		kref_get(&conn->ref);
	xa_unlock(xa);
	return conn;
}

/* admission.c: -EBUSY when @conn's address holds its share, or all are held */
int smbd_setup_admit(struct smbd_conn *conn);
void smbd_setup_ready(struct smbd_conn *conn);
void smbd_setup_leave(struct smbd_conn *conn);
bool smbd_setup_holds(struct smbd_conn *conn);

/* conn.c */
int smbd_conn_create(struct rdma_cm_id *cm_id, struct smbd_params *params,
		     struct rdma_conn_param *req);
void smbd_conn_fail(struct smbd_conn *conn, u32 reason);
void smbd_conn_evict(struct smbd_conn *conn);
void smbd_conn_qp_failed(struct smbd_conn *conn, const char *what);
void smbd_conn_put(struct smbd_conn *conn);
void smbd_conn_arm_timer(struct smbd_conn *conn, u32 ms);
void smbd_conn_set_deadline_locked(struct smbd_conn *conn, u32 ms);
void smbd_conn_rearm_locked(struct smbd_conn *conn);
void smbd_conn_established(struct smbd_conn *conn);
void smbd_conns_shutdown(void);
bool smbd_conn_enter_locked(struct smbd_conn *conn,
			    enum smbd_conn_state to);
void smbd_sockaddr_from(struct smbd_sockaddr *out, const struct sockaddr *sa);
struct smbd_conn *smbd_conn_get(u64 conn_id);
int smbd_ioctl_disconnect(struct file *filp, void *cmd);
int smbd_ioctl_conn_stats(struct file *filp, void *cmd);
extern struct xarray smbd_conns;

/* recv.c */
int smbd_recv_post_first(struct smbd_conn *conn);
int smbd_recv_post_extra_locked(struct smbd_conn *conn);
void smbd_recv_negotiate(struct smbd_conn *conn, struct smbd_recv_io *io);
void smbd_recv_refill(struct smbd_conn *conn);
void smbd_recv_done(struct ib_cq *cq, struct ib_wc *wc);
struct smbd_kevent *smbd_recv_take_held(struct smbd_conn *conn,
					enum smbd_conn_state *state);
void smbd_recv_hand_over(struct smbd_conn *conn);

/* send.c */
/* one SEND_PDU entry (or RDMA_RW reply) as read from userspace */
struct smbd_send_req {
	struct smbd_send_entry entry;
	struct smbd_iovec iov[SMBD_MAX_IOVS];
	u64 total;
};

int smbd_send_raw_locked(struct smbd_conn *conn, const void *buf, size_t len);
int smbd_send_queue_pdu(struct smbd_conn *conn, struct smbd_pdu_out *pdu);
int smbd_send_entry_check(struct smbd_send_req *r);
int smbd_send_entry_copy(struct smbd_conn *conn,
			 const struct smbd_send_req *r,
			 struct smbd_pdu_out **out);
int smbd_send_enqueue_locked(struct smbd_conn *conn, struct smbd_pdu_out *pdu);
void smbd_send_pdu_free(struct smbd_conn *conn, struct smbd_pdu_out *pdu);
void smbd_send_pump(struct smbd_conn *conn);
struct smbd_pdu_out *smbd_pdu_out_alloc(u32 len);
void smbd_pdu_out_free(struct smbd_pdu_out *pdu);
void smbd_send_kick(struct smbd_conn *conn);
void smbd_send_kick_locked(struct smbd_conn *conn);
void smbd_send_work(struct work_struct *work);
void smbd_send_flush(struct smbd_conn *conn);
void smbd_send_done(struct ib_cq *cq, struct ib_wc *wc);
bool smbd_send_last_locked(struct smbd_conn *conn, u32 reason);
int smbd_ioctl_send_pdu(struct file *filp, void *cmd);

/* rw.c */
void smbd_rw_size(struct smbd_conn *conn);
void smbd_rw_init_qp_attr(struct smbd_conn *conn, struct ib_qp_init_attr *attr);
void smbd_rw_work(struct work_struct *work);
void smbd_rw_shutdown(struct smbd_conn *conn);
int smbd_ioctl_rdma_rw(struct file *filp, void *cmd);

/* smb2.c */
void smbd_smb2_work(struct work_struct *work);

/* routing.c: the roles files hold and which file owns a connection */
extern struct mutex smbd_lock;
int smbd_route_binding(struct smbd_conn *conn, u64 session_id);
int smbd_route_offer(struct smbd_conn *conn);
void smbd_route_forget(struct smbd_conn *conn);
void smbd_route_confirm(struct smbd_conn *conn, const u8 *pdu, u32 len);
void smbd_route_file_closed(struct smbd_file *file);
void smbd_sessions_show(struct seq_file *m);
int smbd_ioctl_listen(struct file *filp, void *cmd);
int smbd_ioctl_accept(struct file *filp, void *cmd);
int smbd_ioctl_register_session(struct file *filp, void *cmd);
int smbd_ioctl_unregister_session(struct file *filp, void *cmd);

/* params.c: SET_PARAMS and the master role */
struct smbd_params *smbd_params_get_current(void);
bool smbd_params_registered(void);
pid_t smbd_params_master_tgid(void);
bool smbd_params_master_user(kuid_t uid);
bool smbd_params_file_closed(struct smbd_file *file);
void smbd_params_put(struct smbd_params *p);
int smbd_ioctl_set_params(struct file *filp, void *cmd);

/* events.c */

struct smbd_kevent *smbd_kevent_alloc(u32 type, u32 conn_id, gfp_t gfp);
void smbd_kevent_free(struct smbd_kevent *kev);
int smbd_event_push(struct smbd_file *file, struct smbd_kevent *kev);
u32 smbd_event_lost_reason(int err);
int smbd_ioctl_get_events(struct file *filp, void *cmd);
__poll_t smbd_events_poll(struct smbd_file *file, struct file *filp,
			  poll_table *wait);
void smbd_events_drain(struct smbd_file *file);

/* file.c */
struct smbd_file *smbd_file_alloc(void);
void smbd_file_get(struct smbd_file *file);
void smbd_file_put(struct smbd_file *file);
void smbd_file_release(struct smbd_file *file);
struct smbd_conn *smbd_file_conn(struct smbd_file *file, u64 conn_id);

/*
 * A file serves the address space that opened it. Another process holding
 * the descriptor (a fork()'s child, or one it was passed to) may only close
 * and poll it: its roles, sessions, connections and pool are the opener's.
 */
static inline bool smbd_file_serves(const struct smbd_file *file,
				    const struct mm_struct *mm)
{
	return mm == file->mm;
}

/* pool.c */
u32 smbd_pool_count(struct smbd_file *file);
int smbd_pool_get(struct smbd_file *file, u32 buffers);
int smbd_ioctl_get_mem_params(struct file *filp, void *cmd);
int smbd_pool_mmap(struct smbd_file *file, struct vm_area_struct *vma);
void smbd_pool_free(struct smbd_file *file);

/* listener.c */
int smbd_listener_init(void);
void smbd_listener_exit(void);
int smbd_listeners_update(u16 *busy_port);
void smbd_listeners_show(struct seq_file *m);

/* ioctl.c */
long smbd_ioctl(struct file *filp, unsigned int cmd, unsigned long arg);

#endif /* SMBDIRECT_H */
