// The UAPI is an ABI: every struct's size and every field's offset is pinned
// here, so a change that moves a field fails the build and this test.
#include <linux/smbd.h>

#include <gtest/gtest.h>

#include <cstddef>

#define PIN(type, field, off)                                                  \
    static_assert(offsetof(struct type, field) == (off), #type "." #field)
#define SIZE(type, n)                                                          \
    static_assert(sizeof(struct type) == (n), #type " size");                  \
    static_assert(sizeof(struct type) % 8 == 0, #type " multiple of 8")

SIZE(smbd_info, 80);
PIN(smbd_info, size, 0);
PIN(smbd_info, flags, 4);
PIN(smbd_info, out_abi_version, 8);
PIN(smbd_info, out_max_events, 12);
PIN(smbd_info, out_features, 16);
PIN(smbd_info, out_max_batch, 24);
PIN(smbd_info, out_max_pdu_size, 28);
PIN(smbd_info, out_max_slices, 32);
PIN(smbd_info, out_max_descriptors, 36);
PIN(smbd_info, out_pool_buffers, 40);
PIN(smbd_info, out_buffer_size, 44);
PIN(smbd_info, out_port, 48);
PIN(smbd_info, out_max_iovs, 52);
PIN(smbd_info, out_mmap_size, 56);
PIN(smbd_info, out_ib_port, 64);
PIN(smbd_info, out_port_flags, 68);
PIN(smbd_info, out_max_sessions, 72);
PIN(smbd_info, out_send_queue_bytes, 76);

SIZE(smbd_set_params, 168);
PIN(smbd_set_params, size, 0);
PIN(smbd_set_params, flags, 4);
PIN(smbd_set_params, receive_credit_max, 8);
PIN(smbd_set_params, send_credit_target, 12);
PIN(smbd_set_params, max_send_size, 16);
PIN(smbd_set_params, max_receive_size, 20);
PIN(smbd_set_params, max_fragmented_size, 24);
PIN(smbd_set_params, max_read_write_size, 28);
PIN(smbd_set_params, keepalive_interval_ms, 32);
PIN(smbd_set_params, keepalive_timeout_ms, 36);
PIN(smbd_set_params, negotiate_timeout_ms, 40);
PIN(smbd_set_params, accept_timeout_ms, 44);
PIN(smbd_set_params, server_guid, 48);
PIN(smbd_set_params, capabilities, 64);
PIN(smbd_set_params, security_mode, 68);
PIN(smbd_set_params, min_dialect, 72);
PIN(smbd_set_params, max_dialect, 76);
PIN(smbd_set_params, max_transact_size, 80);
PIN(smbd_set_params, max_read_size, 84);
PIN(smbd_set_params, max_write_size, 88);
PIN(smbd_set_params, policy_flags, 92);
PIN(smbd_set_params, cipher_count, 96);
PIN(smbd_set_params, signing_algorithm_count, 100);
PIN(smbd_set_params, ciphers, 104);
PIN(smbd_set_params, signing_algorithms, 120);
PIN(smbd_set_params, sec_blob_len, 136);
PIN(smbd_set_params, __reserved, 140);
PIN(smbd_set_params, sec_blob_ptr, 144);
PIN(smbd_set_params, setup_timeout_ms, 152);
PIN(smbd_set_params, credit_timeout_ms, 156);
PIN(smbd_set_params, out_busy_port, 160);
PIN(smbd_set_params, __reserved2, 164);

SIZE(smbd_listen, 8);
PIN(smbd_listen, size, 0);
PIN(smbd_listen, flags, 4);

SIZE(smbd_accept, 32);
PIN(smbd_accept, size, 0);
PIN(smbd_accept, flags, 4);
PIN(smbd_accept, token, 8);
PIN(smbd_accept, out_conn_id, 24);

SIZE(smbd_session, 16);
PIN(smbd_session, size, 0);
PIN(smbd_session, flags, 4);
PIN(smbd_session, session_id, 8);

SIZE(smbd_mem_params, 40);
PIN(smbd_mem_params, size, 0);
PIN(smbd_mem_params, flags, 4);
PIN(smbd_mem_params, out_buffer_count, 8);
PIN(smbd_mem_params, out_buffer_size, 12);
PIN(smbd_mem_params, out_mmap_size, 16);
PIN(smbd_mem_params, out_mmap_offset, 24);
PIN(smbd_mem_params, buffer_count, 32);
PIN(smbd_mem_params, __reserved, 36);

SIZE(smbd_sockaddr, 24);
PIN(smbd_sockaddr, family, 0);
PIN(smbd_sockaddr, port, 2);
PIN(smbd_sockaddr, scope_id, 4);
PIN(smbd_sockaddr, addr, 8);

SIZE(smbd_event, 128);
// the first version, which callers may still pass
static_assert(sizeof(struct smbd_event) == SMBD_EVENT_SIZE_V1);
PIN(smbd_event, type, 0);
PIN(smbd_event, flags, 4);
PIN(smbd_event, conn_id, 8);
PIN(smbd_event, user_data, 16);
PIN(smbd_event, status, 24);
PIN(smbd_event, data_len, 28);
PIN(smbd_event, data_offset, 32);
PIN(smbd_event, u, 40);
PIN(smbd_event, u.new_connection.token, 40);
PIN(smbd_event, u.new_connection.client_guid, 56);
PIN(smbd_event, u.new_connection.local, 72);
PIN(smbd_event, u.new_connection.remote, 96);
PIN(smbd_event, u.new_channel.session_id, 40);
PIN(smbd_event, u.new_channel.negotiate_req_len, 48);
PIN(smbd_event, u.new_channel.negotiate_resp_len, 52);
PIN(smbd_event, u.new_channel.session_setup_len, 56);
PIN(smbd_event, u.new_channel.dialect, 60);
PIN(smbd_event, u.new_channel.local, 64);
PIN(smbd_event, u.new_channel.remote, 88);
PIN(smbd_event, u.new_channel.max_pdu_size, 112);
PIN(smbd_event, u.disconnected.reason, 40);
PIN(smbd_event, u.rdma_done.bytes, 40);
PIN(smbd_event, u.overflow.lost, 40);
static_assert(sizeof(((struct smbd_event *)nullptr)->u) == 88, "event union");

SIZE(smbd_get_events, 48);
PIN(smbd_get_events, size, 0);
PIN(smbd_get_events, flags, 4);
PIN(smbd_get_events, max_events, 8);
PIN(smbd_get_events, event_size, 12);
PIN(smbd_get_events, events_ptr, 16);
PIN(smbd_get_events, data_ptr, 24);
PIN(smbd_get_events, data_len, 32);
PIN(smbd_get_events, out_count, 36);
PIN(smbd_get_events, out_data_used, 40);
PIN(smbd_get_events, __reserved, 44);

SIZE(smbd_iovec, 16);
PIN(smbd_iovec, base, 0);
PIN(smbd_iovec, len, 8);

SIZE(smbd_send_entry, 40);
// the first version, which callers may still pass
static_assert(sizeof(struct smbd_send_entry) == SMBD_SEND_ENTRY_SIZE_V1);
PIN(smbd_send_entry, conn_id, 0);
PIN(smbd_send_entry, user_data, 8);
PIN(smbd_send_entry, iov_ptr, 16);
PIN(smbd_send_entry, iov_count, 24);
PIN(smbd_send_entry, flags, 28);
PIN(smbd_send_entry, invalidate_token, 32);
PIN(smbd_send_entry, __reserved, 36);

SIZE(smbd_send_pdu, 32);
PIN(smbd_send_pdu, size, 0);
PIN(smbd_send_pdu, flags, 4);
PIN(smbd_send_pdu, count, 8);
PIN(smbd_send_pdu, entry_size, 12);
PIN(smbd_send_pdu, entries_ptr, 16);
PIN(smbd_send_pdu, out_done, 24);
PIN(smbd_send_pdu, __reserved, 28);

SIZE(smbd_slice, 16);
PIN(smbd_slice, buffer, 0);
PIN(smbd_slice, offset, 4);
PIN(smbd_slice, length, 8);
PIN(smbd_slice, __reserved, 12);

SIZE(smbd_rw_op, 64);
static_assert(sizeof(struct smbd_rw_op) == SMBD_RW_OP_SIZE_V2);
// the first version, which callers may still pass, ends before reply_ptr
static_assert(offsetof(struct smbd_rw_op, reply_ptr) == SMBD_RW_OP_SIZE_V1);
PIN(smbd_rw_op, conn_id, 0);
PIN(smbd_rw_op, user_data, 8);
PIN(smbd_rw_op, slices_ptr, 16);
PIN(smbd_rw_op, descs_ptr, 24);
PIN(smbd_rw_op, slice_count, 32);
PIN(smbd_rw_op, desc_count, 36);
PIN(smbd_rw_op, direction, 40);
PIN(smbd_rw_op, __reserved, 44);
PIN(smbd_rw_op, reply_ptr, 48);
PIN(smbd_rw_op, reply_size, 56);
PIN(smbd_rw_op, __reserved2, 60);

SIZE(smbd_rdma_rw, 32);
PIN(smbd_rdma_rw, size, 0);
PIN(smbd_rdma_rw, flags, 4);
PIN(smbd_rdma_rw, count, 8);
PIN(smbd_rdma_rw, op_size, 12);
PIN(smbd_rdma_rw, ops_ptr, 16);
PIN(smbd_rdma_rw, out_done, 24);
PIN(smbd_rdma_rw, __reserved, 28);

SIZE(smbd_disconnect, 16);
PIN(smbd_disconnect, size, 0);
PIN(smbd_disconnect, flags, 4);
PIN(smbd_disconnect, conn_id, 8);

SIZE(smbd_conn_stats, 104);
PIN(smbd_conn_stats, size, 0);
PIN(smbd_conn_stats, flags, 4);
PIN(smbd_conn_stats, conn_id, 8);
PIN(smbd_conn_stats, out_pdus_received, 16);
PIN(smbd_conn_stats, out_bytes_received, 24);
PIN(smbd_conn_stats, out_pdus_sent, 32);
PIN(smbd_conn_stats, out_bytes_sent, 40);
PIN(smbd_conn_stats, out_keepalives_sent, 48);
PIN(smbd_conn_stats, out_credit_stalls, 56);
PIN(smbd_conn_stats, out_rdma_reads, 64);
PIN(smbd_conn_stats, out_rdma_writes, 72);
PIN(smbd_conn_stats, out_rdma_read_bytes, 80);
PIN(smbd_conn_stats, out_rdma_write_bytes, 88);
PIN(smbd_conn_stats, out_rdma_errors, 96);

namespace {

// 64-bit fields must be 8-aligned for 32-bit userspace too (__aligned_u64).
TEST(UapiLayout, SixtyFourBitFieldsAreAligned)
{
    EXPECT_EQ(alignof(struct smbd_info), 8u);
    EXPECT_EQ(alignof(struct smbd_event), 8u);
    EXPECT_EQ(alignof(struct smbd_rw_op), 8u);
    EXPECT_EQ(alignof(struct smbd_sockaddr), 4u);
}

// The size lives in the struct, not in the ioctl number (iommufd style), so
// structs can grow without new numbers; the numbers are dense from 0x80.
TEST(UapiLayout, IoctlNumbersCarryTypeAndCommand)
{
    const unsigned long cmds[] = {
        SMBD_IOC_GET_INFO,         SMBD_IOC_SET_PARAMS,
        SMBD_IOC_LISTEN,           SMBD_IOC_ACCEPT,
        SMBD_IOC_REGISTER_SESSION, SMBD_IOC_UNREGISTER_SESSION,
        SMBD_IOC_GET_MEM_PARAMS,   SMBD_IOC_GET_EVENTS,
        SMBD_IOC_SEND_PDU,         SMBD_IOC_RDMA_RW,
        SMBD_IOC_DISCONNECT,       SMBD_IOC_CONN_STATS,
    };
    unsigned int nr = SMBD_CMD_BASE;
    for (unsigned long cmd : cmds) {
        SCOPED_TRACE(nr);
        EXPECT_EQ(_IOC_TYPE(cmd), SMBD_IOCTL_TYPE);
        EXPECT_EQ(_IOC_NR(cmd), nr++);
        EXPECT_EQ(_IOC_SIZE(cmd), 0u);
        EXPECT_EQ(_IOC_DIR(cmd), static_cast<unsigned>(_IOC_NONE));
    }
}

TEST(UapiLayout, EventTypesAndReasonsAreDistinct)
{
    const unsigned int types[] = {
        SMBD_EVENT_NEW_CONNECTION, SMBD_EVENT_NEW_CHANNEL,
        SMBD_EVENT_PDU_RECEIVED,   SMBD_EVENT_SEND_DONE,
        SMBD_EVENT_RDMA_DONE,      SMBD_EVENT_DISCONNECTED,
        SMBD_EVENT_OVERFLOW,       SMBD_EVENT_SEND_ROOM,
    };
    for (size_t i = 0; i < std::size(types); i++)
        EXPECT_EQ(types[i], i + 1);
    EXPECT_EQ(SMBD_REASON_NO_MEMORY, 17);
    EXPECT_EQ(SMBD_REASON_SETUP_TIMEOUT, 18);
    EXPECT_EQ(SMBD_REASON_EVICTED, 19);
}

} // namespace
