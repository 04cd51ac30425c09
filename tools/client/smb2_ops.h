// The SMB2 messages a session needs between SESSION_SETUP and READ/WRITE:
// TREE_CONNECT, CREATE (with a lease), CLOSE, TREE_DISCONNECT, LOGOFF,
// ECHO, CANCEL, lease breaks and their acknowledgment, the status check every
// response goes through, and compound chains
// (MS-SMB2 2.2.2-2.2.16, 2.2.30, 3.2.4.1.4). READ and WRITE are smb2rw's (its
// parse_read_response() checks DataOffset/DataLength and gives the inline
// data); the ids, statuses and sizes here are the ones that client code and
// tests share. Pure functions over bytes, like smb2_wire.h: builders take the
// header the caller filled (MessageId, SessionId, TreeId, credits, flags) and
// set only its Command; parsers treat every length and offset as hostile and
// name the field and the numbers when one is out of range.
#ifndef SMBD_CLIENT_SMB2_OPS_H
#define SMBD_CLIENT_SMB2_OPS_H

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "error.h"
#include "signing.h"
#include "smb2.h"
#include "smb2_rw.h"

namespace smbd::client {

// Commands (2.2.1.2); NEGOTIATE and SESSION_SETUP are the protocol core's,
// READ and WRITE smb2rw's, CANCEL smb2sec's (its GMAC nonce marks it).
inline constexpr uint16_t SMB2_LOGOFF = 0x0002;
inline constexpr uint16_t SMB2_TREE_CONNECT = 0x0003;
inline constexpr uint16_t SMB2_TREE_DISCONNECT = 0x0004;
inline constexpr uint16_t SMB2_CREATE = 0x0005;
inline constexpr uint16_t SMB2_CLOSE = 0x0006;
inline constexpr uint16_t SMB2_ECHO = 0x000D;
inline constexpr uint16_t SMB2_CHANGE_NOTIFY = 0x000F;
inline constexpr uint16_t SMB2_OPLOCK_BREAK = 0x0012;
using smb2rw::SMB2_READ;
using smb2rw::SMB2_WRITE;
using smb2sec::SMB2_CANCEL;

inline constexpr uint32_t NT_STATUS_PENDING = 0x00000103u;
inline constexpr uint32_t NT_STATUS_ACCESS_DENIED = 0xC0000022u;
inline constexpr uint32_t NT_STATUS_LOGON_FAILURE = 0xC000006Du;
inline constexpr uint32_t NT_STATUS_NETWORK_NAME_DELETED = 0xC00000C9u;
inline constexpr uint32_t NT_STATUS_CANCELLED = 0xC0000120u;

// Access mask bits (2.2.13.1), the few this tool asks for.
inline constexpr uint32_t FILE_READ_ATTRIBUTES = 0x00000080u;
inline constexpr uint32_t DELETE = 0x00010000u;
inline constexpr uint32_t GENERIC_WRITE = 0x40000000u;
inline constexpr uint32_t GENERIC_READ = 0x80000000u;
// CreateDisposition
inline constexpr uint32_t FILE_OPEN = 1;
inline constexpr uint32_t FILE_CREATE = 2;
inline constexpr uint32_t FILE_OPEN_IF = 3;
inline constexpr uint32_t FILE_OVERWRITE_IF = 5;
// CreateOptions
inline constexpr uint32_t FILE_LIST_DIRECTORY = 0x00000001u;
inline constexpr uint32_t FILE_DIRECTORY_FILE = 0x00000001u;
inline constexpr uint32_t FILE_NON_DIRECTORY_FILE = 0x00000040u;
inline constexpr uint32_t FILE_NOTIFY_CHANGE_FILE_NAME = 0x00000001u;
inline constexpr uint32_t FILE_NOTIFY_CHANGE_DIR_NAME = 0x00000002u;
inline constexpr uint32_t FILE_DELETE_ON_CLOSE = 0x00001000u;
// RequestedOplockLevel / OplockLevel
inline constexpr uint8_t SMB2_OPLOCK_LEVEL_NONE = 0x00;
inline constexpr uint8_t SMB2_OPLOCK_LEVEL_II = 0x01;
inline constexpr uint8_t SMB2_OPLOCK_LEVEL_EXCLUSIVE = 0x08;
inline constexpr uint8_t SMB2_OPLOCK_LEVEL_BATCH = 0x09;
inline constexpr uint8_t SMB2_OPLOCK_LEVEL_LEASE = 0xFF;
// LeaseState (2.2.13.2.8)
inline constexpr uint32_t SMB2_LEASE_READ_CACHING = 0x01;
inline constexpr uint32_t SMB2_LEASE_HANDLE_CACHING = 0x02;
inline constexpr uint32_t SMB2_LEASE_WRITE_CACHING = 0x04;
inline constexpr uint32_t SMB2_LEASE_RWH = SMB2_LEASE_READ_CACHING |
                                           SMB2_LEASE_HANDLE_CACHING |
                                           SMB2_LEASE_WRITE_CACHING;

// Fixed parts of the bodies (StructureSize minus an odd Buffer byte).
inline constexpr size_t TREE_CONNECT_REQ_FIXED = 8;
inline constexpr size_t TREE_CONNECT_RESP_SIZE = 16;
inline constexpr size_t CREATE_REQ_FIXED = 56;
inline constexpr size_t CREATE_RESP_FIXED = 88;
inline constexpr size_t CLOSE_REQ_SIZE = 24;
inline constexpr size_t CLOSE_RESP_SIZE = 60;
inline constexpr size_t EMPTY_BODY_SIZE = 4; // LOGOFF, TREE_DISCONNECT, CANCEL
// A create context's header (2.2.13.2) and the lease contexts' data.
inline constexpr size_t CREATE_CONTEXT_HDR_SIZE = 16;
inline constexpr size_t LEASE_V1_DATA_SIZE = 32;
inline constexpr size_t LEASE_V2_DATA_SIZE = 52;

// "CREATE (0x0005)" for the commands this tool sends, "0x0042" otherwise.
std::string smb2_command_text(uint16_t command);

// Every response goes through this first (2.2.1.2, 2.2.2): a header,
// SERVER_TO_REDIR set, Command @expected_command (Errc::protocol if not);
// any status but STATUS_SUCCESS is Errc::smb2_status naming it, once its
// ERROR body has been checked (a malformed one is Errc::protocol). An
// interim response is an error here: ask is_interim() first.
Status smb2_check_status(std::span<const uint8_t> pdu,
                         uint32_t expected_command);
// The interim response of 3.3.4.2: STATUS_PENDING on an async header; the
// final response follows with the same AsyncId.
bool is_interim(const smb2_hdr &hdr);

// An async header (2.2.1.1) has its 8-byte AsyncId where the sync header
// has ProcessId and TreeId (offset 32): smb2_hdr_decode() reads it into
// process_id (low half) and tree_id (high half). These read and write it
// in a PDU (spans shorter than a header are left alone and read as 0) and
// in a decoded header.
void smb2_set_async_id(std::span<uint8_t> pdu, uint64_t id);
uint64_t smb2_async_id(std::span<const uint8_t> pdu);
void smb2_set_async_id(smb2_hdr &hdr, uint64_t id);
uint64_t smb2_async_id(const smb2_hdr &hdr);

// TREE_CONNECT (2.2.9): Flags 0, @unc ("\\server\share") in UTF-16LE right
// after the fixed body. Errc::invalid_argument for invalid UTF-8 or a path
// longer than PathLength can say.
Result<std::vector<uint8_t>> build_tree_connect(const smb2_hdr &hdr,
                                                std::string_view unc);

struct TreeConnectResponse {
    smb2_hdr hdr{}; // TreeId: hdr.tree_id
    uint8_t share_type = 0;
    uint32_t share_flags = 0;
    uint32_t capabilities = 0;
    uint32_t maximal_access = 0;
};

Result<TreeConnectResponse>
parse_tree_connect_response(std::span<const uint8_t> pdu);

struct CreateRequest {
    smb2_hdr hdr{};
    std::string name; // UTF-8, relative to the share; empty: its root
    uint8_t oplock_level = SMB2_OPLOCK_LEVEL_NONE;
    uint32_t impersonation = 2; // Impersonation
    uint32_t desired_access = 0;
    uint32_t file_attributes = 0x80; // FILE_ATTRIBUTE_NORMAL
    uint32_t share_access = 7;       // read, write, delete
    uint32_t disposition = FILE_OPEN;
    uint32_t options = 0;
    // already-encoded create contexts (lease_context_v2(),
    // chain_create_contexts()); may be empty
    std::vector<uint8_t> contexts;
};

// CREATE (2.2.13): the name at NameOffset 0x78 (an empty name still leaves
// the one Buffer byte StructureSize 57 counts), the contexts after it at
// the next 8-byte boundary. Errc::invalid_argument for invalid UTF-8 or a
// name or contexts longer than their length fields can say.
Result<std::vector<uint8_t>> build_create(const CreateRequest &r);

// One SMB2_CREATE_REQUEST_LEASE_V2 context (2.2.13.2.10), "RqLs" with 52
// bytes of data: @key, @state (SMB2_LEASE_*), no flags, no parent, epoch 0.
// Ask with oplock_level SMB2_OPLOCK_LEVEL_LEASE.
std::vector<uint8_t> lease_context_v2(const std::array<uint8_t, 16> &key,
                                      uint32_t state);
// One SMB2_CREATE_DURABLE_HANDLE_REQUEST_V2 context (2.2.13.2.11), "DH2Q"
// with 32 bytes of data: Timeout @timeout_ms (0: the server's), not
// persistent, @create_guid. It needs a lease or a batch oplock beside it.
std::vector<uint8_t>
durable_context_v2(const std::array<uint8_t, 16> &create_guid,
                   uint32_t timeout_ms);
// Contexts into one chain: each but the last padded to 8 bytes, with Next
// set to its padded length (2.2.13.2).
std::vector<uint8_t>
chain_create_contexts(std::vector<std::vector<uint8_t>> contexts);

struct CreateResponse {
    smb2_hdr hdr{};
    uint8_t oplock_level = 0;
    uint32_t create_action = 0;
    uint64_t end_of_file = 0;
    std::array<uint8_t, 16> file_id{};
    // LeaseState of the "RqLs" response context (V1 or V2), if any
    std::optional<uint32_t> lease_state;
    // Timeout of the "DH2Q" response context: the handle is durable
    std::optional<uint32_t> durable_timeout;
};

// CREATE response (2.2.14); each create context's Next, NameOffset/Length
// and DataOffset/Length are checked against its context and the chain
// against the PDU.
Result<CreateResponse> parse_create_response(std::span<const uint8_t> pdu);

// CLOSE (2.2.15): Flags 0, so the response carries no attributes.
std::vector<uint8_t> build_close(const smb2_hdr &hdr,
                                 const std::array<uint8_t, 16> &file_id);

struct CloseResponse {
    smb2_hdr hdr{};
    uint16_t flags = 0;
    uint64_t allocation_size = 0;
    uint64_t end_of_file = 0;
    uint32_t file_attributes = 0;
};

Result<CloseResponse> parse_close_response(std::span<const uint8_t> pdu);

// LOGOFF (2.2.7), TREE_DISCONNECT (2.2.11) and ECHO (2.2.28):
// StructureSize 4, Reserved.
std::vector<uint8_t> build_logoff(const smb2_hdr &hdr);
std::vector<uint8_t> build_tree_disconnect(const smb2_hdr &hdr);
std::vector<uint8_t> build_echo(const smb2_hdr &hdr);
// Their responses (2.2.8, 2.2.12, 2.2.29): @command's, StructureSize 4.
Result<smb2_hdr> parse_empty_response(std::span<const uint8_t> pdu,
                                      uint16_t command);

// CHANGE_NOTIFY (2.2.35) of @dir for @filter, answering with up to
// @output_length bytes; a request that waits, which CANCEL ends.
std::vector<uint8_t> build_change_notify(const smb2_hdr &hdr,
                                         const std::array<uint8_t, 16> &dir,
                                         uint32_t filter,
                                         uint32_t output_length);

// Lease Break Notification (2.2.23.2): an OPLOCK_BREAK of StructureSize
// 44 that no request asked for (MessageId all ones).
inline constexpr uint32_t SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED = 0x01;
struct LeaseBreak {
    uint16_t new_epoch = 0;
    uint32_t flags = 0; // SMB2_NOTIFY_BREAK_LEASE_FLAG_*
    std::array<uint8_t, 16> key{};
    uint32_t current_state = 0; // SMB2_LEASE_*
    uint32_t new_state = 0;
};
Result<LeaseBreak> parse_lease_break(std::span<const uint8_t> pdu);
// Lease Break Acknowledgment (2.2.24.2) of @key, taking @state.
std::vector<uint8_t> build_lease_break_ack(const smb2_hdr &hdr,
                                           const std::array<uint8_t, 16> &key,
                                           uint32_t state);
// Its response (2.2.25.2), StructureSize 36: the key and state acked.
struct LeaseBreakResponse {
    std::array<uint8_t, 16> key{};
    uint32_t state = 0;
};
Result<LeaseBreakResponse>
parse_lease_break_response(std::span<const uint8_t> pdu);

// IOCTL (2.2.31) FSCTL_QUERY_NETWORK_INTERFACE_INFO: FileId all ones, no
// input, SMB2_0_IOCTL_IS_FSCTL, up to @max_output bytes of answer.
inline constexpr uint32_t FSCTL_QUERY_NETWORK_INTERFACE_INFO = 0x001401FCu;
std::vector<uint8_t> build_query_interfaces(const smb2_hdr &hdr,
                                            uint32_t max_output);

// NETWORK_INTERFACE_INFO (2.2.32.5) Capability bits.
inline constexpr uint32_t IFACE_RSS_CAPABLE = 0x1;
inline constexpr uint32_t IFACE_RDMA_CAPABLE = 0x2;
struct NetworkInterface {
    uint32_t if_index = 0;
    uint32_t capability = 0;
    uint64_t link_speed = 0; // bits per second
    std::string address;     // "192.0.2.1" or "2001:db8::1"
};
// Its IOCTL response (2.2.32): StructureSize 49, the CtlCode asked, the
// output inside the PDU; each entry 152 bytes inside the output, Next a
// forward offset, the address IPv4 or IPv6.
Result<std::vector<NetworkInterface>>
parse_query_interfaces_response(std::span<const uint8_t> pdu);

// CANCEL (2.2.30), StructureSize 4. It takes no credit and has no
// response. For a request still synchronous, @hdr carries its MessageId;
// for one that got an interim response, SMB2_FLAGS_ASYNC_COMMAND and the
// interim's AsyncId (smb2_set_async_id() on @hdr or on the result).
std::vector<uint8_t> build_cancel(const smb2_hdr &hdr);

// A compound chain (3.2.4.1.4): each element but the last padded with
// zeros to a multiple of 8 and its NextCommand set to its padded length,
// the last's NextCommand 0; with @related, SMB2_FLAGS_RELATED_OPERATIONS
// on every element after the first (the caller gives those the SessionId,
// TreeId and FileId to inherit: all ones). Elements are the builders'
// requests (at least a header; anything shorter is copied unchanged).
// Signatures are left alone: a signed chain is signed afterwards, element
// by element, each over its bytes including its padding (3.1.4.1), through
// compound_elements().
std::vector<uint8_t> build_compound(std::vector<std::vector<uint8_t>> pdus,
                                    bool related);
// The elements of a chain build_compound() made, as writable views, each
// with its padding; a NextCommand out of range ends the walk and the rest
// is the last element.
std::vector<std::span<uint8_t>> compound_elements(std::span<uint8_t> chain);
// The elements of a received chain (3.3.5.2.7, 3.2.5.1.9): NextCommand 0
// or a multiple of 8, at least a header, and short of the chain's end;
// every element's header decoded; the last runs to the end of the chain.
Result<std::vector<std::span<const uint8_t>>>
split_compound(std::span<const uint8_t> chain);

} // namespace smbd::client

#endif // SMBD_CLIENT_SMB2_OPS_H
