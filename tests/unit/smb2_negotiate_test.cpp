// SMB2 header and NEGOTIATE: request parsing, the decision smbd would make
// and the response bytes Samba 4.17's smbd_smb2_request_process_negprot()
// sends (MS-SMB2 2.2.1, 2.2.3, 2.2.4, 3.3.5.4).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include "smb2.h"
#include "wire_bytes.h"

namespace {

constexpr uint32_t kLinuxCaps = // smb311_values.req_capabilities (Linux 6.1)
    SMB2_GLOBAL_CAP_DFS | SMB2_GLOBAL_CAP_LEASING | SMB2_GLOBAL_CAP_LARGE_MTU |
    SMB2_GLOBAL_CAP_PERSISTENT_HANDLES | SMB2_GLOBAL_CAP_DIRECTORY_LEASING |
    SMB2_GLOBAL_CAP_ENCRYPTION; // 0x77

constexpr std::array<uint8_t, 16> kClientGuid = {
    0x3c, 0x8e, 0x5f, 0x1a, 0x27, 0x44, 0x4b, 0x9d,
    0x81, 0x02, 0xe6, 0x7a, 0x55, 0x19, 0xc0, 0x2b,
};

// Samba's ServerGuid: the lower-case NetBIOS name, NUL-padded.
constexpr std::array<uint8_t, 16> kServerGuid = {
    'f', 'i', 'l', 'e', 's', 'e', 'r', 'v', 'e', 'r', 0, 0, 0, 0, 0, 0,
};

constexpr std::array<uint8_t, 16> kPosixTag = {
    0x93, 0xAD, 0x25, 0x50, 0x9C, 0xB4, 0x11, 0xE7,
    0xB4, 0x23, 0x83, 0xDE, 0x96, 0x8B, 0xCD, 0x7C,
};

// The start of Samba's SPNEGO negTokenInit; only its length and position
// matter to the builder.
constexpr std::array<uint8_t, 13> kSecBlob = {
    0x60, 0x48, 0x06, 0x06, 0x2b, 0x06, 0x01,
    0x05, 0x05, 0x02, 0xa0, 0x3e, 0x30,
};

std::array<uint8_t, 32> pattern32(uint8_t first)
{
    std::array<uint8_t, 32> a{};
    for (size_t i = 0; i < a.size(); i++)
        a[i] = uint8_t(first + i);
    return a;
}

const std::array<uint8_t, 32> kClientSalt = pattern32(0xa0);
const std::array<uint8_t, 32> kServerSalt = pattern32(0x50);
constexpr uint64_t kSystemTime = 0x01d9e1a2b3c4d5e6ull; // a FILETIME in 2023

// The fixed smbd policy: Samba 4.17 defaults with multichannel, 8 MiB sizes.
smb2_negotiate_policy samba_policy()
{
    smb2_negotiate_policy p{};
    std::copy(kServerGuid.begin(), kServerGuid.end(), p.server_guid);
    p.capabilities = SMB2_GLOBAL_CAP_DFS | SMB2_GLOBAL_CAP_LEASING |
                     SMB2_GLOBAL_CAP_LARGE_MTU | SMB2_GLOBAL_CAP_MULTI_CHANNEL |
                     SMB2_GLOBAL_CAP_ENCRYPTION;
    p.security_mode = SMB2_NEGOTIATE_SIGNING_ENABLED;
    p.min_dialect = SMB2_DIALECT_300;
    p.max_dialect = SMB2_DIALECT_311;
    p.max_transact_size = 8u << 20;
    p.max_read_size = 8u << 20;
    p.max_write_size = 8u << 20;
    // "server smb3 encryption algorithms" default order
    p.ciphers[0] = SMB2_ENCRYPTION_AES128_GCM;
    p.ciphers[1] = SMB2_ENCRYPTION_AES128_CCM;
    p.ciphers[2] = SMB2_ENCRYPTION_AES256_GCM;
    p.ciphers[3] = SMB2_ENCRYPTION_AES256_CCM;
    p.cipher_count = 4;
    // "server smb3 signing algorithms" default order
    p.signing_algorithms[0] = SMB2_SIGNING_AES128_GMAC;
    p.signing_algorithms[1] = SMB2_SIGNING_AES128_CMAC;
    p.signing_algorithms[2] = SMB2_SIGNING_HMAC_SHA256;
    p.signing_algorithm_count = 3;
    p.posix_extensions = true;
    p.sec_blob = kSecBlob.data();
    p.sec_blob_len = kSecBlob.size();
    return p;
}

struct Hdr {
    uint16_t credit_charge = 0;
    uint16_t command = SMB2_NEGOTIATE;
    uint16_t credits = 10;
    uint32_t flags = 0;
    uint32_t next_command = 0;
    uint64_t message_id = 0;
    uint32_t process_id = 0x0000a1b2;
    uint32_t tree_id = 0;
    uint64_t session_id = 0;
};

// MS-SMB2 2.2.1.2 SYNC header, as the Linux client fills it for NEGOTIATE.
void put_hdr(Bytes &w, const Hdr &h)
{
    w.u8(0xfe).u8('S').u8('M').u8('B'); // 0x00 ProtocolId
    w.le16(64);                         // 0x04 StructureSize
    w.le16(h.credit_charge);            // 0x06 CreditCharge
    w.le32(0);                          // 0x08 Status
    w.le16(h.command);                  // 0x0c Command
    w.le16(h.credits);                  // 0x0e CreditRequest
    w.le32(h.flags);                    // 0x10 Flags
    w.le32(h.next_command);             // 0x14 NextCommand
    w.le64(h.message_id);               // 0x18 MessageId
    w.le32(h.process_id);               // 0x20 Reserved (ProcessId)
    w.le32(h.tree_id);                  // 0x24 TreeId
    w.le64(h.session_id);               // 0x28 SessionId
    w.zeros(16);                        // 0x30 Signature
}

// --- Byte-exact requests of the Linux cifs client 6.1 ---------------------

// mount -o vers=3.1.1,multichannel //srv/share with the module parameter
// enable_negotiate_signing=1 (so that the signing context is present).
std::vector<uint8_t> linux_311_request()
{
    Bytes w;
    put_hdr(w, Hdr{});
    // NEGOTIATE request body at 64
    w.le16(36);                                         //  64 StructureSize
    w.le16(1);                                          //  66 DialectCount
    w.le16(SMB2_NEGOTIATE_SIGNING_ENABLED);             //  68 SecurityMode
    w.le16(0);                                          //  70 Reserved
    w.le32(kLinuxCaps | SMB2_GLOBAL_CAP_MULTI_CHANNEL); // 72 Capabilities
    w.raw(kClientGuid);                                 //  76 ClientGuid
    w.le32(104);              //  92 NegotiateContextOffset
    w.le16(5);                //  96 NegotiateContextCount
    w.le16(0);                //  98 Reserved2
    w.le16(SMB2_DIALECT_311); // 100 Dialects[0]
    w.zeros(2);               // 102 padding to 8
    // 104 SMB2_PREAUTH_INTEGRITY_CAPABILITIES
    w.le16(SMB2_PREAUTH_INTEGRITY_CAPABILITIES).le16(38).le32(0);
    w.le16(1);                             // 112 HashAlgorithmCount
    w.le16(32);                            // 114 SaltLength
    w.le16(SMB2_PREAUTH_INTEGRITY_SHA512); // 116 HashAlgorithms[0]
    w.raw(kClientSalt);                    // 118 Salt
    w.zeros(2);                            // 150 padding
    // 152 SMB2_ENCRYPTION_CAPABILITIES (enable_gcm_256 is the default)
    w.le16(SMB2_ENCRYPTION_CAPABILITIES).le16(8).le32(0);
    w.le16(3);                          // 160 CipherCount
    w.le16(SMB2_ENCRYPTION_AES128_GCM); // 162
    w.le16(SMB2_ENCRYPTION_AES256_GCM); // 164
    w.le16(SMB2_ENCRYPTION_AES128_CCM); // 166
    // 168 SMB2_NETNAME_NEGOTIATE_CONTEXT_ID: "srv" in UTF-16LE
    w.le16(SMB2_NETNAME_NEGOTIATE_CONTEXT_ID).le16(6).le32(0);
    w.le16('s').le16('r').le16('v'); // 176 NetName
    w.zeros(2);                      // 182 padding
    // 184 SMB2_POSIX_EXTENSIONS_AVAILABLE
    w.le16(SMB2_POSIX_EXTENSIONS_AVAILABLE).le16(16).le32(0);
    w.raw(kPosixTag); // 192
    // 208 SMB2_SIGNING_CAPABILITIES, DataLength rounded up to 8 by Linux
    w.le16(SMB2_SIGNING_CAPABILITIES).le16(8).le32(0);
    w.le16(1);                        // 216 SigningAlgorithmCount
    w.le16(SMB2_SIGNING_AES128_CMAC); // 218
    w.zeros(4);                       // 220 rounding inside the data
    EXPECT_EQ(w.size(), 224u);
    return w.b;
}

// mount -o vers=3 (SMB3ANY): three dialects, default module parameters.
std::vector<uint8_t> linux_3any_request()
{
    Bytes w;
    put_hdr(w, Hdr{});
    w.le16(36);                             //  64 StructureSize
    w.le16(3);                              //  66 DialectCount
    w.le16(SMB2_NEGOTIATE_SIGNING_ENABLED); //  68 SecurityMode
    w.le16(0);                              //  70 Reserved
    w.le32(kLinuxCaps);                     //  72 Capabilities
    w.raw(kClientGuid);                     //  76 ClientGuid
    w.le32(112);                            //  92 NegotiateContextOffset
    w.le16(4);                              //  96 NegotiateContextCount
    w.le16(0);                              //  98 Reserved2
    w.le16(SMB2_DIALECT_300);               // 100 Dialects
    w.le16(SMB2_DIALECT_302);               // 102
    w.le16(SMB2_DIALECT_311);               // 104
    w.zeros(6);                             // 106 padding to 8
    // 112 preauth
    w.le16(SMB2_PREAUTH_INTEGRITY_CAPABILITIES).le16(38).le32(0);
    w.le16(1).le16(32).le16(SMB2_PREAUTH_INTEGRITY_SHA512).raw(kClientSalt);
    w.zeros(2); // 158 padding
    // 160 encryption
    w.le16(SMB2_ENCRYPTION_CAPABILITIES).le16(8).le32(0);
    w.le16(3)
        .le16(SMB2_ENCRYPTION_AES128_GCM)
        .le16(SMB2_ENCRYPTION_AES256_GCM)
        .le16(SMB2_ENCRYPTION_AES128_CCM);
    // 176 netname "srv"
    w.le16(SMB2_NETNAME_NEGOTIATE_CONTEXT_ID).le16(6).le32(0);
    w.le16('s').le16('r').le16('v');
    w.zeros(2); // 190 padding
    // 192 posix, the last context: not padded
    w.le16(SMB2_POSIX_EXTENSIONS_AVAILABLE).le16(16).le32(0);
    w.raw(kPosixTag);
    EXPECT_EQ(w.size(), 216u);
    return w.b;
}

// mount -o vers=3.0.2: one dialect, no contexts, offset and count left 0.
std::vector<uint8_t> linux_302_request()
{
    Bytes w;
    put_hdr(w, Hdr{});
    w.le16(36);                             //  64 StructureSize
    w.le16(1);                              //  66 DialectCount
    w.le16(SMB2_NEGOTIATE_SIGNING_ENABLED); //  68 SecurityMode
    w.le16(0);                              //  70 Reserved
    w.le32(kLinuxCaps);                     //  72 Capabilities
    w.raw(kClientGuid);                     //  76 ClientGuid
    w.le32(0);                              //  92 NegotiateContextOffset
    w.le16(0);                              //  96 NegotiateContextCount
    w.le16(0);                              //  98 Reserved2
    w.le16(SMB2_DIALECT_302);               // 100 Dialects[0]
    EXPECT_EQ(w.size(), 102u);
    return w.b;
}

// --- A generic request builder for the rule tests --------------------------

struct Ctx {
    uint16_t type;
    std::vector<uint8_t> data;
};

std::vector<uint8_t> preauth_data(std::vector<uint16_t> hashes,
                                  uint16_t salt_len = 32,
                                  size_t salt_bytes = 32)
{
    Bytes w;
    w.le16(uint16_t(hashes.size())).le16(salt_len);
    for (uint16_t h : hashes)
        w.le16(h);
    return w.raw(std::span(kClientSalt).first(salt_bytes)).b;
}

// CipherCount / SigningAlgorithmCount followed by the ids.
std::vector<uint8_t> id_data(std::vector<uint16_t> ids)
{
    Bytes w;
    w.le16(uint16_t(ids.size()));
    for (uint16_t id : ids)
        w.le16(id);
    return w.b;
}

// Count, 6 bytes of Reserved/Padding+Flags, ids (RDMA transform, compression).
std::vector<uint8_t> id_data_skip6(std::vector<uint16_t> ids)
{
    Bytes w;
    w.le16(uint16_t(ids.size())).le16(0).le32(0);
    for (uint16_t id : ids)
        w.le16(id);
    return w.b;
}

Ctx preauth_ctx()
{
    return {SMB2_PREAUTH_INTEGRITY_CAPABILITIES,
            preauth_data({SMB2_PREAUTH_INTEGRITY_SHA512})};
}
Ctx cipher_ctx(std::vector<uint16_t> ids)
{
    return {SMB2_ENCRYPTION_CAPABILITIES, id_data(ids)};
}
Ctx signing_ctx(std::vector<uint16_t> ids)
{
    return {SMB2_SIGNING_CAPABILITIES, id_data(ids)};
}
Ctx rdma_ctx(std::vector<uint16_t> ids)
{
    return {SMB2_RDMA_TRANSFORM_CAPABILITIES, id_data_skip6(ids)};
}
Ctx compression_ctx(std::vector<uint16_t> ids)
{
    return {SMB2_COMPRESSION_CAPABILITIES, id_data_skip6(ids)};
}
Ctx posix_ctx()
{
    return {SMB2_POSIX_EXTENSIONS_AVAILABLE,
            {kPosixTag.begin(), kPosixTag.end()}};
}

struct NegReq {
    Hdr hdr;
    uint16_t structure_size = 36;
    std::vector<uint16_t> dialects = {SMB2_DIALECT_311};
    std::optional<uint16_t> dialect_count; // default: dialects.size()
    uint32_t capabilities = kLinuxCaps;
    std::vector<Ctx> contexts = {preauth_ctx()};
    std::optional<uint32_t> context_offset; // default: the aligned offset
    std::optional<uint16_t> context_count;  // default: contexts.size()
};

std::vector<uint8_t> build(const NegReq &r)
{
    bool has_311 =
        std::ranges::find(r.dialects, SMB2_DIALECT_311) != r.dialects.end();
    size_t aligned = (100 + 2 * r.dialects.size() + 7) & ~size_t(7);
    Bytes w;
    put_hdr(w, r.hdr);
    w.le16(r.structure_size);
    w.le16(r.dialect_count.value_or(uint16_t(r.dialects.size())));
    w.le16(SMB2_NEGOTIATE_SIGNING_ENABLED);
    w.le16(0);
    w.le32(r.capabilities);
    w.raw(kClientGuid);
    w.le32(r.context_offset.value_or(has_311 ? uint32_t(aligned) : 0));
    w.le16(r.context_count.value_or(uint16_t(r.contexts.size())));
    w.le16(0);
    for (uint16_t d : r.dialects)
        w.le16(d);
    if (has_311 && !r.context_offset)
        w.pad8(); // the context list starts here even when it is empty
    // each context starts 8-aligned; the last one is not padded
    for (const Ctx &c : r.contexts) {
        w.pad8();
        w.le16(c.type).le16(uint16_t(c.data.size())).le32(0).raw(c.data);
    }
    return w.b;
}

smbd_proto_error parse(const std::vector<uint8_t> &buf, smb2_negotiate_req *req)
{
    return smb2_negotiate_req_parse(buf.data(), buf.size(), req);
}

smb2_negotiated decide(const smb2_negotiate_policy &p, const NegReq &r)
{
    std::vector<uint8_t> buf = build(r);
    smb2_negotiate_req req;
    EXPECT_PROTO_ERR(parse(buf, &req), SMBD_E_OK);
    smb2_negotiated out;
    smb2_negotiate_decide(&p, &req, &out);
    return out;
}

std::vector<uint8_t> respond(const smb2_negotiate_policy &p,
                             const std::vector<uint8_t> &reqbuf)
{
    smb2_negotiate_req req;
    EXPECT_PROTO_ERR(parse(reqbuf, &req), SMBD_E_OK);
    smb2_negotiated neg;
    smb2_negotiate_decide(&p, &req, &neg);
    EXPECT_EQ(neg.status, NT_STATUS_SUCCESS);
    std::vector<uint8_t> out(1024, 0xee);
    size_t len = 0;
    EXPECT_PROTO_ERR(smb2_negotiate_resp_build(&p, &req, &neg, kSystemTime,
                                               kServerSalt.data(), out.data(),
                                               out.size(), &len),
                     SMBD_E_OK);
    out.resize(len);
    return out;
}

std::vector<uint16_t> ids(const smb2_id_list &l)
{
    std::vector<uint16_t> v;
    for (uint16_t i = 0; i < l.count; i++)
        v.push_back(smb2_id_list_get(&l, i));
    return v;
}

// The response header Samba writes for the Linux NEGOTIATE above.
void put_resp_hdr(Bytes &w, uint32_t status)
{
    w.u8(0xfe).u8('S').u8('M').u8('B'); // 0x00 ProtocolId
    w.le16(64);                         // 0x04 StructureSize
    w.le16(0);                          // 0x06 CreditCharge, copied
    w.le32(status);                     // 0x08 Status
    w.le16(SMB2_NEGOTIATE);             // 0x0c Command
    w.le16(1); // 0x0e CreditResponse: NEGOTIATE grants 1
    w.le32(SMB2_FLAGS_SERVER_TO_REDIR); // 0x10 Flags
    w.le32(0);                          // 0x14 NextCommand
    w.le64(0);                          // 0x18 MessageId, copied
    w.le32(0x0000a1b2);                 // 0x20 ProcessId, copied
    w.le32(0);                          // 0x24 TreeId
    w.le64(0);                          // 0x28 SessionId
    w.zeros(16);                        // 0x30 Signature, copied
}

// ===========================================================================
// SMB2 header
// ===========================================================================

TEST(Smb2Header, ParsesEveryField)
{
    Bytes w;
    w.u8(0xfe).u8('S').u8('M').u8('B').le16(64);
    w.le16(0x0102);             // CreditCharge
    w.le32(0xc0000203);         // Status
    w.le16(0x0001);             // Command
    w.le16(0x0304);             // CreditRequest
    w.le32(0x00000008);         // Flags: SIGNED
    w.le32(0);                  // NextCommand
    w.le64(0x1122334455667788); // MessageId
    w.le32(0x99aabbcc);         // ProcessId
    w.le32(0xddeeff00);         // TreeId
    w.le64(0x0123456789abcdef); // SessionId
    for (uint8_t i = 0; i < 16; i++)
        w.u8(uint8_t(0xf0 | i)); // Signature

    smb2_hdr h;
    EXPECT_PROTO_ERR(smb2_hdr_parse(w.b.data(), w.size(), &h), SMBD_E_OK);
    EXPECT_EQ(h.credit_charge, 0x0102);
    EXPECT_EQ(h.status, 0xc0000203u);
    EXPECT_EQ(h.command, 0x0001);
    EXPECT_EQ(h.credits, 0x0304);
    EXPECT_EQ(h.flags, SMB2_FLAGS_SIGNED);
    EXPECT_EQ(h.next_command, 0u);
    EXPECT_EQ(h.message_id, 0x1122334455667788u);
    EXPECT_EQ(h.process_id, 0x99aabbccu);
    EXPECT_EQ(h.tree_id, 0xddeeff00u);
    EXPECT_EQ(h.session_id, 0x0123456789abcdefu);
    for (uint8_t i = 0; i < 16; i++)
        EXPECT_EQ(h.signature[i], 0xf0 | i);
}

// Every field at its named offset, as a request carries it.
TEST(Smb2Header, BuildsEveryFieldAndDecodesBack)
{
    smb2_hdr h{};
    h.credit_charge = 0x0102;
    h.command = 0x0009;
    h.credits = 0x0304;
    h.flags = SMB2_FLAGS_SIGNED;
    h.next_command = 0x78;
    h.message_id = 0x1122334455667788;
    h.process_id = 0x99aabbcc;
    h.tree_id = 0xddeeff00;
    h.session_id = 0x0123456789abcdef;
    for (uint8_t i = 0; i < 16; i++)
        h.signature[i] = uint8_t(0xf0 | i);
    std::vector<uint8_t> out(SMB2_HDR_SIZE);
    smb2_hdr_build(&h, out.data());

    Bytes w;
    w.u8(0xfe).u8('S').u8('M').u8('B').le16(64);
    w.le16(0x0102);             // CreditCharge
    w.le32(0);                  // ChannelSequence, Reserved
    w.le16(0x0009);             // Command
    w.le16(0x0304);             // CreditRequest
    w.le32(SMB2_FLAGS_SIGNED);  // Flags
    w.le32(0x78);               // NextCommand
    w.le64(0x1122334455667788); // MessageId
    w.le32(0x99aabbcc);         // ProcessId
    w.le32(0xddeeff00);         // TreeId
    w.le64(0x0123456789abcdef); // SessionId
    w.raw(std::span<const uint8_t>(h.signature, 16));
    EXPECT_TRUE(SameBytes(out, w.b));

    EXPECT_EQ(smbd_get_le16(&out[SMB2_HDR_CREDITS]), 0x0304);
    EXPECT_EQ(smbd_get_le64(&out[SMB2_HDR_SESSION_ID]), h.session_id);
    smb2_hdr back;
    EXPECT_PROTO_ERR(smb2_hdr_parse(out.data(), out.size(), &back), SMBD_E_OK);
    EXPECT_EQ(back.message_id, h.message_id);
    EXPECT_EQ(back.next_command, h.next_command);
    EXPECT_EQ(0, std::memcmp(back.signature, h.signature, 16));
}

TEST(Smb2Header, RejectsTruncatedHeader)
{
    std::vector<uint8_t> full = linux_302_request();
    for (size_t len : {0, 1, 4, 6, 32, 63}) {
        SCOPED_TRACE(len);
        // an exact-size copy, so that ASan sees any read past the end
        std::vector<uint8_t> cut(full.begin(), full.begin() + long(len));
        smb2_hdr h;
        smb2_negotiate_req req;
        EXPECT_PROTO_ERR(smb2_hdr_parse(cut.data(), cut.size(), &h),
                         SMBD_E_TRUNCATED);
        EXPECT_PROTO_ERR(parse(cut, &req), SMBD_E_TRUNCATED);
    }
}

TEST(Smb2Header, RejectsWrongProtocolId)
{
    const std::array<uint8_t, 4> ids[] = {
        {0xff, 'S', 'M', 'B'}, // SMB1: smbd would answer an SMB1 negprot
        {0xfd, 'S', 'M', 'B'}, // transform header: nothing is encrypted yet
        {0xfc, 'S', 'M', 'B'}, // compression transform
        {0xfe, 's', 'm', 'b'}, {0, 0, 0, 0},
    };
    for (const auto &id : ids) {
        SCOPED_TRACE(id[0]);
        std::vector<uint8_t> buf = linux_302_request();
        std::copy(id.begin(), id.end(), buf.begin());
        smb2_hdr h;
        smb2_negotiate_req req;
        EXPECT_PROTO_ERR(smb2_hdr_parse(buf.data(), buf.size(), &h),
                         SMBD_E_SMB2_PROTOCOL_ID);
        EXPECT_PROTO_ERR(parse(buf, &req), SMBD_E_SMB2_PROTOCOL_ID);
    }
}

TEST(Smb2Header, RejectsHeaderStructureSizeNot64)
{
    for (uint16_t size : {0, 63, 65, 128}) {
        SCOPED_TRACE(size);
        std::vector<uint8_t> buf = linux_302_request();
        buf[4] = uint8_t(size);
        buf[5] = uint8_t(size >> 8);
        smb2_hdr h;
        smb2_negotiate_req req;
        EXPECT_PROTO_ERR(smb2_hdr_parse(buf.data(), buf.size(), &h),
                         SMBD_E_SMB2_HEADER_SIZE);
        EXPECT_PROTO_ERR(parse(buf, &req), SMBD_E_SMB2_HEADER_SIZE);
    }
}

TEST(Smb2Header, RejectsResponseFlag)
{
    NegReq r;
    r.hdr.flags = SMB2_FLAGS_SERVER_TO_REDIR;
    std::vector<uint8_t> buf = build(r);
    smb2_hdr h;
    smb2_negotiate_req req;
    EXPECT_PROTO_ERR(smb2_hdr_parse(buf.data(), buf.size(), &h),
                     SMBD_E_SMB2_NOT_REQUEST);
    EXPECT_PROTO_ERR(parse(buf, &req), SMBD_E_SMB2_NOT_REQUEST);
}

TEST(Smb2IdList, GetAndHasReadLittleEndianIds)
{
    const uint8_t raw[] = {0x02, 0x00, 0x04, 0x00, 0x01, 0x03};
    smb2_id_list l{};
    l.ids = raw;
    l.count = 3;
    l.present = true;
    EXPECT_EQ(smb2_id_list_get(&l, 0), 0x0002);
    EXPECT_EQ(smb2_id_list_get(&l, 2), 0x0301);
    EXPECT_TRUE(smb2_id_list_has(&l, 0x0004));
    EXPECT_TRUE(smb2_id_list_has(&l, 0x0301));
    EXPECT_FALSE(smb2_id_list_has(&l, 0x0001));
    l.count = 0; // an absent list has nothing
    EXPECT_FALSE(smb2_id_list_has(&l, 0x0002));
}

// ===========================================================================
// NEGOTIATE request: the Linux client's vectors
// ===========================================================================

TEST(Smb2NegotiateParse, LinuxSmb311Request)
{
    std::vector<uint8_t> buf = linux_311_request();
    smb2_negotiate_req req;
    ASSERT_PROTO_ERR(parse(buf, &req), SMBD_E_OK);
    EXPECT_EQ(req.hdr.command, SMB2_NEGOTIATE);
    EXPECT_EQ(req.hdr.credits, 10);
    EXPECT_EQ(req.hdr.message_id, 0u);
    EXPECT_EQ(req.hdr.process_id, 0xa1b2u);
    EXPECT_EQ(req.security_mode, SMB2_NEGOTIATE_SIGNING_ENABLED);
    EXPECT_EQ(req.capabilities, 0x7fu);
    EXPECT_TRUE(
        std::equal(kClientGuid.begin(), kClientGuid.end(), req.client_guid));
    EXPECT_EQ(ids(req.dialects), std::vector<uint16_t>{SMB2_DIALECT_311});
    EXPECT_EQ(req.context_count, 5);
    EXPECT_TRUE(req.preauth_hashes.present);
    EXPECT_EQ(ids(req.preauth_hashes),
              std::vector<uint16_t>{SMB2_PREAUTH_INTEGRITY_SHA512});
    EXPECT_TRUE(req.ciphers.present);
    EXPECT_EQ(ids(req.ciphers),
              (std::vector<uint16_t>{SMB2_ENCRYPTION_AES128_GCM,
                                     SMB2_ENCRYPTION_AES256_GCM,
                                     SMB2_ENCRYPTION_AES128_CCM}));
    EXPECT_TRUE(req.signing_algorithms.present);
    EXPECT_EQ(ids(req.signing_algorithms),
              std::vector<uint16_t>{SMB2_SIGNING_AES128_CMAC});
    EXPECT_FALSE(req.rdma_transforms.present);
    EXPECT_FALSE(req.compression);
    EXPECT_TRUE(req.posix);
    // the lists point into the request (nothing is copied)
    EXPECT_EQ(req.dialects.ids, buf.data() + 100);
    EXPECT_EQ(req.preauth_hashes.ids, buf.data() + 116);
    EXPECT_EQ(req.ciphers.ids, buf.data() + 162);
    EXPECT_EQ(req.signing_algorithms.ids, buf.data() + 218);
}

TEST(Smb2NegotiateParse, LinuxSmb3AnyRequest)
{
    std::vector<uint8_t> buf = linux_3any_request();
    smb2_negotiate_req req;
    ASSERT_PROTO_ERR(parse(buf, &req), SMBD_E_OK);
    EXPECT_EQ(req.capabilities, kLinuxCaps);
    EXPECT_EQ(ids(req.dialects),
              (std::vector<uint16_t>{SMB2_DIALECT_300, SMB2_DIALECT_302,
                                     SMB2_DIALECT_311}));
    EXPECT_EQ(req.context_count, 4);
    EXPECT_EQ(ids(req.preauth_hashes),
              std::vector<uint16_t>{SMB2_PREAUTH_INTEGRITY_SHA512});
    EXPECT_EQ(req.ciphers.count, 3);
    EXPECT_FALSE(req.signing_algorithms.present); // enable_negotiate_signing=0
    EXPECT_TRUE(req.posix);
}

TEST(Smb2NegotiateParse, LinuxSmb302RequestHasNoContexts)
{
    std::vector<uint8_t> buf = linux_302_request();
    smb2_negotiate_req req;
    ASSERT_PROTO_ERR(parse(buf, &req), SMBD_E_OK);
    EXPECT_EQ(req.security_mode, SMB2_NEGOTIATE_SIGNING_ENABLED);
    EXPECT_EQ(req.capabilities, kLinuxCaps);
    EXPECT_TRUE(
        std::equal(kClientGuid.begin(), kClientGuid.end(), req.client_guid));
    EXPECT_EQ(ids(req.dialects), std::vector<uint16_t>{SMB2_DIALECT_302});
    EXPECT_EQ(req.context_count, 0);
    EXPECT_FALSE(req.preauth_hashes.present);
    EXPECT_FALSE(req.ciphers.present);
    EXPECT_FALSE(req.signing_algorithms.present);
    EXPECT_FALSE(req.posix);
}

// ===========================================================================
// NEGOTIATE response bytes
// ===========================================================================

// Body up to SecurityBufferLength; NegotiateContextOffset and the buffer
// follow in each test.
void put_resp_body(Bytes &w, uint16_t dialect, uint16_t context_count,
                   uint32_t caps)
{
    w.le16(65);                             //  64 StructureSize
    w.le16(SMB2_NEGOTIATE_SIGNING_ENABLED); //  66 SecurityMode
    w.le16(dialect);                        //  68 DialectRevision
    w.le16(context_count);                  //  70 NegotiateContextCount
    w.raw(kServerGuid);                     //  72 ServerGuid
    w.le32(caps);                           //  88 Capabilities
    w.le32(8u << 20);                       //  92 MaxTransactSize
    w.le32(8u << 20);                       //  96 MaxReadSize
    w.le32(8u << 20);                       // 100 MaxWriteSize
    w.le64(kSystemTime);                    // 104 SystemTime
    w.le64(0);                         // 112 ServerStartTime: Samba sends 0
    w.le16(0x80);                      // 120 SecurityBufferOffset
    w.le16(uint16_t(kSecBlob.size())); // 122 SecurityBufferLength
}

// SMB2_PREAUTH_INTEGRITY_CAPABILITIES as smbd answers it: SHA-512, 32-byte
// salt.
void put_preauth_resp(Bytes &w)
{
    w.le16(SMB2_PREAUTH_INTEGRITY_CAPABILITIES).le16(38).le32(0);
    w.le16(1);                             // HashAlgorithmCount
    w.le16(32);                            // SaltLength
    w.le16(SMB2_PREAUTH_INTEGRITY_SHA512); // HashAlgorithms[0]
    w.raw(kServerSalt);                    // Salt
}

TEST(Smb2NegotiateResponse, LinuxSmb311ExactBytes)
{
    Bytes w;
    put_resp_hdr(w, NT_STATUS_SUCCESS);
    // ENCRYPTION is answered by the encryption context on 3.1.1
    put_resp_body(w, SMB2_DIALECT_311, 4,
                  SMB2_GLOBAL_CAP_DFS | SMB2_GLOBAL_CAP_LEASING |
                      SMB2_GLOBAL_CAP_LARGE_MTU |
                      SMB2_GLOBAL_CAP_MULTI_CHANNEL);
    w.le32(144);         // 124 NegotiateContextOffset
    w.raw(kSecBlob);     // 128 Buffer (13 bytes)
    w.zeros(3);          // 141 padding to 8
    put_preauth_resp(w); // 144 preauth (46 bytes)
    w.zeros(2);          // 190 padding
    // 192 encryption: the server's first choice the client offers
    w.le16(SMB2_ENCRYPTION_CAPABILITIES).le16(4).le32(0);
    w.le16(1).le16(SMB2_ENCRYPTION_AES128_GCM);
    w.zeros(4); // 204 padding
    // 208 signing: GMAC is preferred but the client offered only CMAC
    w.le16(SMB2_SIGNING_CAPABILITIES).le16(4).le32(0);
    w.le16(1).le16(SMB2_SIGNING_AES128_CMAC);
    w.zeros(4); // 220 padding
    // 224 POSIX, the last context: not padded
    w.le16(SMB2_POSIX_EXTENSIONS_AVAILABLE).le16(16).le32(0);
    w.raw(kPosixTag);
    ASSERT_EQ(w.size(), 248u);

    EXPECT_TRUE(SameBytes(respond(samba_policy(), linux_311_request()), w.b));
}

TEST(Smb2NegotiateResponse, LinuxSmb3AnyExactBytes)
{
    Bytes w;
    put_resp_hdr(w, NT_STATUS_SUCCESS);
    // no MULTI_CHANNEL: this client did not offer it
    put_resp_body(w, SMB2_DIALECT_311, 3,
                  SMB2_GLOBAL_CAP_DFS | SMB2_GLOBAL_CAP_LEASING |
                      SMB2_GLOBAL_CAP_LARGE_MTU);
    w.le32(144);              // 124 NegotiateContextOffset
    w.raw(kSecBlob).zeros(3); // 128 Buffer, padding
    put_preauth_resp(w);      // 144 preauth
    w.zeros(2);               // 190 padding
    w.le16(SMB2_ENCRYPTION_CAPABILITIES).le16(4).le32(0); // 192 encryption
    w.le16(1).le16(SMB2_ENCRYPTION_AES128_GCM);
    w.zeros(4); // 204 padding
    // 208 POSIX; no signing context because none was offered
    w.le16(SMB2_POSIX_EXTENSIONS_AVAILABLE).le16(16).le32(0);
    w.raw(kPosixTag);
    ASSERT_EQ(w.size(), 232u);

    EXPECT_TRUE(SameBytes(respond(samba_policy(), linux_3any_request()), w.b));
}

TEST(Smb2NegotiateResponse, LinuxSmb302ExactBytes)
{
    Bytes w;
    put_resp_hdr(w, NT_STATUS_SUCCESS);
    // before 3.1.1 ENCRYPTION stays a capability (AES-128-CCM)
    put_resp_body(w, SMB2_DIALECT_302, 0,
                  SMB2_GLOBAL_CAP_DFS | SMB2_GLOBAL_CAP_LEASING |
                      SMB2_GLOBAL_CAP_LARGE_MTU | SMB2_GLOBAL_CAP_ENCRYPTION);
    w.le32(0);       // 124 NegotiateContextOffset: none
    w.raw(kSecBlob); // 128 Buffer, nothing after it
    ASSERT_EQ(w.size(), 141u);

    EXPECT_TRUE(SameBytes(respond(samba_policy(), linux_302_request()), w.b));
}

TEST(Smb2NegotiateResponse, ContextOffsetIsAlignedAfterTheBlob)
{
    const std::vector<uint8_t> blob(16, 0x5a);
    for (uint16_t blob_len : {0, 1, 7, 8, 9, 16}) {
        SCOPED_TRACE(blob_len);
        smb2_negotiate_policy p = samba_policy();
        p.sec_blob = blob_len ? blob.data() : nullptr; // smbd may send none
        p.sec_blob_len = blob_len;
        std::vector<uint8_t> out = respond(p, linux_3any_request());

        size_t ctx_off = (128 + blob_len + 7) & ~size_t(7);
        ASSERT_EQ(out.size(), ctx_off + 48 + 16 + 24); // preauth, cipher, posix
        EXPECT_EQ(smbd_get_le16(&out[64 + 0x38]), 0x80); // SecurityBufferOffset
        EXPECT_EQ(smbd_get_le16(&out[64 + 0x3a]),
                  blob_len); // SecurityBufferLength
        EXPECT_EQ(smbd_get_le32(&out[64 + 0x3c]),
                  ctx_off); // NegotiateContextOffset
        EXPECT_TRUE(std::equal(blob.begin(), blob.begin() + blob_len,
                               out.begin() + 128));
        for (size_t i = 128 + blob_len; i < ctx_off; i++)
            EXPECT_EQ(out[i], 0) << "padding at " << i;
        EXPECT_EQ(smbd_get_le16(&out[ctx_off]),
                  SMB2_PREAUTH_INTEGRITY_CAPABILITIES);
        EXPECT_EQ(smbd_get_le16(&out[ctx_off + 48]),
                  SMB2_ENCRYPTION_CAPABILITIES);
        EXPECT_EQ(smbd_get_le16(&out[ctx_off + 64]),
                  SMB2_POSIX_EXTENSIONS_AVAILABLE);
    }
}

TEST(Smb2NegotiateResponse, OutOfSpaceWhenCapTooSmall)
{
    smb2_negotiate_policy p = samba_policy();
    std::vector<uint8_t> reqbuf = linux_311_request();
    smb2_negotiate_req req;
    ASSERT_PROTO_ERR(parse(reqbuf, &req), SMBD_E_OK);
    smb2_negotiated neg;
    smb2_negotiate_decide(&p, &req, &neg);
    const size_t need = respond(p, reqbuf).size();

    // every cap below the response size fails; exact-size buffers let ASan
    // catch a write past the cap
    for (size_t cap = 0; cap < need; cap++) {
        std::vector<uint8_t> out(cap);
        size_t len = 12345;
        EXPECT_PROTO_ERR(smb2_negotiate_resp_build(&p, &req, &neg, kSystemTime,
                                                   kServerSalt.data(),
                                                   out.data(), cap, &len),
                         SMBD_E_OUT_OF_SPACE)
            << "cap " << cap;
        EXPECT_EQ(len, 12345u) << "cap " << cap;
    }
}

TEST(Smb2NegotiateResponse, NotSupportedErrorExactBytes)
{
    // smbd accepting only 3.1.1 answers the 3.0.2 client with an error
    smb2_negotiate_policy p = samba_policy();
    p.min_dialect = SMB2_DIALECT_311;
    std::vector<uint8_t> reqbuf = linux_302_request();
    smb2_negotiate_req req;
    ASSERT_PROTO_ERR(parse(reqbuf, &req), SMBD_E_OK);
    smb2_negotiated neg;
    smb2_negotiate_decide(&p, &req, &neg);
    ASSERT_EQ(neg.status, NT_STATUS_NOT_SUPPORTED);

    std::vector<uint8_t> out(SMB2_ERROR_RESP_SIZE);
    size_t len = 0;
    ASSERT_PROTO_ERR(smb2_error_resp_build(&req.hdr, neg.status, out.data(),
                                           out.size(), &len),
                     SMBD_E_OK);
    out.resize(len);

    Bytes w;
    put_resp_hdr(w, NT_STATUS_NOT_SUPPORTED);
    w.le16(9); // 64 StructureSize
    w.u8(0);   // 66 ErrorContextCount
    w.u8(0);   // 67 Reserved
    w.le32(0); // 68 ByteCount
    w.u8(0);   // 72 ErrorData: the one byte Samba always sends
    EXPECT_TRUE(SameBytes(out, w.b));
}

// ===========================================================================
// smb2_negotiate_decide: one rule per test
// ===========================================================================

TEST(Smb2NegotiateDecide, ChoosesHighestCommonDialectWithinPolicyRange)
{
    const std::vector<uint16_t> all = {SMB2_DIALECT_202, SMB2_DIALECT_210,
                                       SMB2_DIALECT_300, SMB2_DIALECT_302,
                                       SMB2_DIALECT_311};
    struct Case {
        std::vector<uint16_t> offered;
        uint16_t min, max, want;
    } cases[] = {
        {all, SMB2_DIALECT_300, SMB2_DIALECT_311, SMB2_DIALECT_311},
        {all, SMB2_DIALECT_202, SMB2_DIALECT_302, SMB2_DIALECT_302},
        {all, SMB2_DIALECT_202, SMB2_DIALECT_210, SMB2_DIALECT_210},
        {all, SMB2_DIALECT_202, SMB2_DIALECT_202, SMB2_DIALECT_202},
        // the client's order does not matter
        {{SMB2_DIALECT_311, SMB2_DIALECT_202},
         SMB2_DIALECT_202,
         SMB2_DIALECT_311,
         SMB2_DIALECT_311},
        {{SMB2_DIALECT_302, SMB2_DIALECT_300},
         SMB2_DIALECT_300,
         SMB2_DIALECT_311,
         SMB2_DIALECT_302},
        // 0x02FF (wildcard, SMB1 negprot only) and unknown ids are skipped
        {{0x02ff, 0x0222, SMB2_DIALECT_300},
         SMB2_DIALECT_202,
         SMB2_DIALECT_311,
         SMB2_DIALECT_300},
        // 3.1.1 offered but above the policy
        {{SMB2_DIALECT_300, SMB2_DIALECT_311},
         SMB2_DIALECT_300,
         SMB2_DIALECT_302,
         SMB2_DIALECT_300},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(::testing::Message() << std::hex << c.min << "-" << c.max
                                          << " want " << c.want);
        smb2_negotiate_policy p = samba_policy();
        p.min_dialect = c.min;
        p.max_dialect = c.max;
        NegReq r;
        r.dialects = c.offered;
        smb2_negotiated out = decide(p, r);
        EXPECT_EQ(out.status, NT_STATUS_SUCCESS);
        EXPECT_EQ(out.dialect, c.want);
    }
}

TEST(Smb2NegotiateDecide, NoCommonDialectIsNotSupported)
{
    struct Case {
        std::vector<uint16_t> offered;
        uint16_t min, max;
    } cases[] = {
        {{SMB2_DIALECT_202, SMB2_DIALECT_210},
         SMB2_DIALECT_300,
         SMB2_DIALECT_311},
        {{SMB2_DIALECT_311}, SMB2_DIALECT_300, SMB2_DIALECT_302},
        {{0x02ff}, SMB2_DIALECT_202, SMB2_DIALECT_311},
    };
    for (const Case &c : cases) {
        smb2_negotiate_policy p = samba_policy();
        p.min_dialect = c.min;
        p.max_dialect = c.max;
        NegReq r;
        r.dialects = c.offered;
        smb2_negotiated out = decide(p, r);
        EXPECT_EQ(out.status, NT_STATUS_NOT_SUPPORTED);
        EXPECT_EQ(out.dialect, 0);
    }
}

TEST(Smb2NegotiateDecide, Smb311WithoutPreauthContextIsInvalidParameter)
{
    NegReq r;
    r.contexts = {cipher_ctx({SMB2_ENCRYPTION_AES128_GCM}), posix_ctx()};
    EXPECT_EQ(decide(samba_policy(), r).status, NT_STATUS_INVALID_PARAMETER);

    r.contexts = {};
    EXPECT_EQ(decide(samba_policy(), r).status, NT_STATUS_INVALID_PARAMETER);

    // the rule belongs to 3.1.1: with 3.1.1 above the policy 3.0.2 is fine
    smb2_negotiate_policy p = samba_policy();
    p.max_dialect = SMB2_DIALECT_302;
    r.dialects = {SMB2_DIALECT_302, SMB2_DIALECT_311};
    smb2_negotiated out = decide(p, r);
    EXPECT_EQ(out.status, NT_STATUS_SUCCESS);
    EXPECT_EQ(out.dialect, SMB2_DIALECT_302);
}

TEST(Smb2NegotiateDecide, PreauthWithoutSha512IsNoHashOverlap)
{
    NegReq r;
    r.contexts = {
        {SMB2_PREAUTH_INTEGRITY_CAPABILITIES, preauth_data({0x0002, 0x7777})}};
    EXPECT_EQ(decide(samba_policy(), r).status,
              NT_STATUS_SMB_NO_PREAUTH_INTEGRITY_HASH_OVERLAP);

    // SHA-512 anywhere in the list is enough, and the salt may be empty
    r.contexts = {
        {SMB2_PREAUTH_INTEGRITY_CAPABILITIES,
         preauth_data({0x0002, SMB2_PREAUTH_INTEGRITY_SHA512}, 0, 0)}};
    EXPECT_EQ(decide(samba_policy(), r).status, NT_STATUS_SUCCESS);
}

TEST(Smb2NegotiateDecide, CipherChosenByServerPreference)
{
    struct Case {
        std::vector<uint16_t> server, client;
        uint16_t want;
    } cases[] = {
        // Samba's default order against Linux's order
        {{SMB2_ENCRYPTION_AES128_GCM, SMB2_ENCRYPTION_AES128_CCM,
          SMB2_ENCRYPTION_AES256_GCM, SMB2_ENCRYPTION_AES256_CCM},
         {SMB2_ENCRYPTION_AES256_GCM, SMB2_ENCRYPTION_AES128_CCM,
          SMB2_ENCRYPTION_AES128_GCM},
         SMB2_ENCRYPTION_AES128_GCM},
        {{SMB2_ENCRYPTION_AES128_GCM, SMB2_ENCRYPTION_AES128_CCM,
          SMB2_ENCRYPTION_AES256_GCM, SMB2_ENCRYPTION_AES256_CCM},
         {SMB2_ENCRYPTION_AES256_CCM, SMB2_ENCRYPTION_AES256_GCM,
          SMB2_ENCRYPTION_AES128_CCM},
         SMB2_ENCRYPTION_AES128_CCM},
        // "server smb3 encryption algorithms = AES-256-GCM AES-128-GCM"
        {{SMB2_ENCRYPTION_AES256_GCM, SMB2_ENCRYPTION_AES128_GCM},
         {SMB2_ENCRYPTION_AES128_GCM, SMB2_ENCRYPTION_AES256_GCM,
          SMB2_ENCRYPTION_AES128_CCM},
         SMB2_ENCRYPTION_AES256_GCM},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.want);
        smb2_negotiate_policy p = samba_policy();
        std::ranges::copy(c.server, p.ciphers);
        p.cipher_count = uint8_t(c.server.size());
        NegReq r;
        r.contexts = {preauth_ctx(), cipher_ctx(c.client)};
        smb2_negotiated out = decide(p, r);
        EXPECT_EQ(out.status, NT_STATUS_SUCCESS);
        EXPECT_TRUE(out.encryption_context);
        EXPECT_EQ(out.cipher, c.want);
        EXPECT_FALSE(out.capabilities & SMB2_GLOBAL_CAP_ENCRYPTION);
    }
}

TEST(Smb2NegotiateDecide, NoCommonCipherAnswersCipherZero)
{
    NegReq r;
    r.contexts = {preauth_ctx(), cipher_ctx({0x0005, 0x7fff})};
    smb2_negotiate_policy p = samba_policy();
    smb2_negotiated out = decide(p, r);
    EXPECT_EQ(out.status, NT_STATUS_SUCCESS);
    EXPECT_TRUE(out.encryption_context);
    EXPECT_EQ(out.cipher, 0);
    EXPECT_FALSE(out.capabilities & SMB2_GLOBAL_CAP_ENCRYPTION);

    // on the wire: CipherCount 1, Ciphers[0] 0 (MS-SMB2 3.3.5.4)
    std::vector<uint8_t> resp = respond(p, build(r));
    size_t ctx =
        smbd_get_le32(&resp[64 + 0x3c]) + 48; // after the preauth context
    EXPECT_EQ(smbd_get_le16(&resp[ctx]), SMB2_ENCRYPTION_CAPABILITIES);
    EXPECT_EQ(smbd_get_le16(&resp[ctx + 2]), 4);
    EXPECT_EQ(smbd_get_le16(&resp[ctx + 8]), 1);
    EXPECT_EQ(smbd_get_le16(&resp[ctx + 10]), 0);
}

TEST(Smb2NegotiateDecide, EncryptionCapabilityBefore311GivesCcmAndKeepsCap)
{
    for (uint16_t d : {SMB2_DIALECT_300, SMB2_DIALECT_302}) {
        SCOPED_TRACE(d);
        NegReq r;
        r.dialects = {d};
        r.contexts = {};
        smb2_negotiated out = decide(samba_policy(), r);
        EXPECT_EQ(out.status, NT_STATUS_SUCCESS);
        EXPECT_TRUE(out.capabilities & SMB2_GLOBAL_CAP_ENCRYPTION);
        EXPECT_EQ(out.cipher, SMB2_ENCRYPTION_AES128_CCM);
        EXPECT_FALSE(out.encryption_context);
    }
}

TEST(Smb2NegotiateDecide, Smb311WithoutEncryptionContextKeepsCapAndCcm)
{
    // Samba answers the context only when one was sent
    NegReq r;
    smb2_negotiated out = decide(samba_policy(), r);
    EXPECT_TRUE(out.capabilities & SMB2_GLOBAL_CAP_ENCRYPTION);
    EXPECT_EQ(out.cipher, SMB2_ENCRYPTION_AES128_CCM);
    EXPECT_FALSE(out.encryption_context);
}

TEST(Smb2NegotiateDecide, EncryptionNeedsBothSidesCapability)
{
    struct Case {
        bool server, client;
    } cases[] = {{false, true}, {true, false}, {false, false}};
    for (const Case &c : cases) {
        for (uint16_t d : {SMB2_DIALECT_302, SMB2_DIALECT_311}) {
            SCOPED_TRACE(::testing::Message()
                         << c.server << c.client << " " << d);
            smb2_negotiate_policy p = samba_policy();
            if (!c.server)
                p.capabilities &= ~SMB2_GLOBAL_CAP_ENCRYPTION;
            NegReq r;
            r.dialects = {d};
            r.capabilities = c.client
                                 ? kLinuxCaps
                                 : kLinuxCaps & ~SMB2_GLOBAL_CAP_ENCRYPTION;
            r.contexts = {preauth_ctx(),
                          cipher_ctx({SMB2_ENCRYPTION_AES128_GCM})};
            smb2_negotiated out = decide(p, r);
            EXPECT_EQ(out.status, NT_STATUS_SUCCESS);
            EXPECT_FALSE(out.capabilities & SMB2_GLOBAL_CAP_ENCRYPTION);
            EXPECT_FALSE(out.encryption_context);
            EXPECT_EQ(out.cipher, 0);
        }
    }
    // 2.1 has no encryption at all
    NegReq r;
    r.dialects = {SMB2_DIALECT_210};
    smb2_negotiate_policy p = samba_policy();
    p.min_dialect = SMB2_DIALECT_202;
    smb2_negotiated out = decide(p, r);
    EXPECT_FALSE(out.capabilities & SMB2_GLOBAL_CAP_ENCRYPTION);
    EXPECT_EQ(out.cipher, 0);
}

TEST(Smb2NegotiateDecide, SigningContextOnlyWithCommonAlgorithm)
{
    struct Case {
        std::optional<std::vector<uint16_t>> client;
        bool context;
        uint16_t algorithm;
    } cases[] = {
        {std::vector<uint16_t>{SMB2_SIGNING_AES128_CMAC,
                               SMB2_SIGNING_AES128_GMAC},
         true, SMB2_SIGNING_AES128_GMAC}, // server preference
        {std::vector<uint16_t>{SMB2_SIGNING_HMAC_SHA256}, true,
         SMB2_SIGNING_HMAC_SHA256},
        {std::vector<uint16_t>{0x0003, 0x1234}, false,
         SMB2_SIGNING_AES128_CMAC},
        {std::nullopt, false, SMB2_SIGNING_AES128_CMAC},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.algorithm);
        NegReq r;
        if (c.client)
            r.contexts = {preauth_ctx(), signing_ctx(*c.client)};
        smb2_negotiated out = decide(samba_policy(), r);
        EXPECT_EQ(out.status, NT_STATUS_SUCCESS);
        EXPECT_EQ(out.signing_context, c.context);
        EXPECT_EQ(out.signing_algorithm, c.algorithm);
    }
}

TEST(Smb2NegotiateDecide, DefaultSigningAlgorithmByDialect)
{
    struct Case {
        uint16_t dialect, algorithm;
    } cases[] = {
        {SMB2_DIALECT_202, SMB2_SIGNING_HMAC_SHA256},
        {SMB2_DIALECT_210, SMB2_SIGNING_HMAC_SHA256},
        {SMB2_DIALECT_300, SMB2_SIGNING_AES128_CMAC},
        {SMB2_DIALECT_302, SMB2_SIGNING_AES128_CMAC},
        {SMB2_DIALECT_311, SMB2_SIGNING_AES128_CMAC},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.dialect);
        smb2_negotiate_policy p = samba_policy();
        p.min_dialect = SMB2_DIALECT_202;
        NegReq r;
        r.dialects = {c.dialect};
        smb2_negotiated out = decide(p, r);
        EXPECT_EQ(out.status, NT_STATUS_SUCCESS);
        EXPECT_EQ(out.signing_algorithm, c.algorithm);
        EXPECT_FALSE(out.signing_context);
    }
}

TEST(Smb2NegotiateDecide, MultiChannelOnlyWhenBothOfferIt)
{
    struct Case {
        bool server, client;
        uint16_t dialect;
        bool want;
    } cases[] = {
        {true, true, SMB2_DIALECT_311, true},
        {true, true, SMB2_DIALECT_300, true},
        {true, false, SMB2_DIALECT_311, false},
        {false, true, SMB2_DIALECT_311, false},
        {true, true, SMB2_DIALECT_210, false}, // a 3.x capability
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(::testing::Message()
                     << c.server << c.client << " " << c.dialect);
        smb2_negotiate_policy p = samba_policy();
        p.min_dialect = SMB2_DIALECT_202;
        if (!c.server)
            p.capabilities &= ~SMB2_GLOBAL_CAP_MULTI_CHANNEL;
        NegReq r;
        r.dialects = {c.dialect};
        r.capabilities =
            kLinuxCaps | (c.client ? SMB2_GLOBAL_CAP_MULTI_CHANNEL : 0);
        smb2_negotiated out = decide(p, r);
        EXPECT_EQ(bool(out.capabilities & SMB2_GLOBAL_CAP_MULTI_CHANNEL),
                  c.want);
    }
}

TEST(Smb2NegotiateDecide, NoLeasingOrLargeMtuOn202And64KiBSizes)
{
    smb2_negotiate_policy p = samba_policy();
    p.min_dialect = SMB2_DIALECT_202;
    NegReq r;
    r.dialects = {SMB2_DIALECT_202};
    smb2_negotiated out = decide(p, r);
    EXPECT_EQ(out.status, NT_STATUS_SUCCESS);
    EXPECT_EQ(out.capabilities, SMB2_GLOBAL_CAP_DFS);
    EXPECT_EQ(out.max_transact_size, 0x10000u);
    EXPECT_EQ(out.max_read_size, 0x10000u);
    EXPECT_EQ(out.max_write_size, 0x10000u);

    // smaller configured sizes are kept
    p.max_read_size = 4096;
    EXPECT_EQ(decide(p, r).max_read_size, 4096u);
}

TEST(Smb2NegotiateDecide, LeasingAndLargeMtuFrom210)
{
    smb2_negotiate_policy p = samba_policy();
    p.min_dialect = SMB2_DIALECT_202;
    NegReq r;
    r.dialects = {SMB2_DIALECT_210};
    smb2_negotiated out = decide(p, r);
    EXPECT_EQ(out.capabilities, SMB2_GLOBAL_CAP_DFS | SMB2_GLOBAL_CAP_LEASING |
                                    SMB2_GLOBAL_CAP_LARGE_MTU);
    EXPECT_EQ(out.max_read_size, 8u << 20);

    // without LARGE_MTU (Samba on port 139) the 64 KiB limit stays
    p.capabilities &= ~SMB2_GLOBAL_CAP_LARGE_MTU;
    out = decide(p, r);
    EXPECT_EQ(out.capabilities, SMB2_GLOBAL_CAP_DFS | SMB2_GLOBAL_CAP_LEASING);
    EXPECT_EQ(out.max_write_size, 0x10000u);
}

TEST(Smb2NegotiateDecide, SizesCappedBelow16MiB)
{
    smb2_negotiate_policy p = samba_policy();
    p.max_transact_size = p.max_read_size = p.max_write_size = 64u << 20;
    smb2_negotiated out = decide(p, NegReq{});
    // the largest PDU less room for a header, as Samba computes it
    EXPECT_EQ(out.max_transact_size, 0xffff00u);
    EXPECT_EQ(out.max_read_size, 0xffff00u);
    EXPECT_EQ(out.max_write_size, 0xffff00u);
}

TEST(Smb2NegotiateDecide, DfsAndSecurityModeComeFromPolicy)
{
    smb2_negotiate_policy p = samba_policy();
    p.security_mode =
        SMB2_NEGOTIATE_SIGNING_ENABLED | SMB2_NEGOTIATE_SIGNING_REQUIRED;
    NegReq r;
    r.capabilities = 0; // DFS is granted whatever the client says
    smb2_negotiated out = decide(p, r);
    EXPECT_TRUE(out.capabilities & SMB2_GLOBAL_CAP_DFS);
    EXPECT_EQ(out.security_mode,
              SMB2_NEGOTIATE_SIGNING_ENABLED | SMB2_NEGOTIATE_SIGNING_REQUIRED);

    p.capabilities &= ~SMB2_GLOBAL_CAP_DFS; // "host msdfs = no"
    EXPECT_FALSE(decide(p, r).capabilities & SMB2_GLOBAL_CAP_DFS);
}

TEST(Smb2NegotiateDecide, PersistentHandlesAreNeverGranted)
{
    // no smbd announces persistent handles (no continuous availability)
    smb2_negotiate_policy p = samba_policy();
    p.capabilities |= SMB2_GLOBAL_CAP_PERSISTENT_HANDLES;
    NegReq r;
    r.capabilities |= SMB2_GLOBAL_CAP_PERSISTENT_HANDLES;
    EXPECT_FALSE(decide(p, r).capabilities &
                 SMB2_GLOBAL_CAP_PERSISTENT_HANDLES);
}

TEST(Smb2NegotiateDecide, DirectoryLeasingWhenPolicyClientAndSmb3Agree)
{
    // smbd 4.22, smb2_negprot.c: from SMB 3.0, when the client offers it
    // and "smb3 directory leases" is on; 4.17's policy never has the bit
    struct Case {
        bool policy, client;
        uint16_t dialect;
        bool want;
    } cases[] = {
        {true, true, SMB2_DIALECT_311, true},
        {true, true, SMB2_DIALECT_300, true},
        {true, true, SMB2_DIALECT_210, false},
        {true, false, SMB2_DIALECT_311, false},
        {false, true, SMB2_DIALECT_311, false},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(testing::Message()
                     << c.policy << c.client << " 0x" << std::hex << c.dialect);
        smb2_negotiate_policy p = samba_policy();
        p.min_dialect = SMB2_DIALECT_210;
        if (c.policy)
            p.capabilities |= SMB2_GLOBAL_CAP_DIRECTORY_LEASING;
        NegReq r;
        r.dialects = {c.dialect};
        if (c.client)
            r.capabilities |= SMB2_GLOBAL_CAP_DIRECTORY_LEASING;
        else
            r.capabilities &= ~SMB2_GLOBAL_CAP_DIRECTORY_LEASING;
        smb2_negotiated out = decide(p, r);
        EXPECT_EQ(out.dialect, c.dialect);
        EXPECT_EQ(!!(out.capabilities & SMB2_GLOBAL_CAP_DIRECTORY_LEASING),
                  c.want);
    }
}

TEST(Smb2NegotiateDecide, PosixContextOnlyWithTagAndPolicyFlag)
{
    std::vector<uint8_t> other_tag(kPosixTag.begin(), kPosixTag.end());
    other_tag[15] ^= 1;
    std::vector<uint8_t> tag_second = other_tag;
    tag_second.insert(tag_second.end(), kPosixTag.begin(), kPosixTag.end());
    struct Case {
        std::optional<std::vector<uint8_t>> data;
        bool policy, parsed, want;
    } cases[] = {
        {std::vector<uint8_t>(kPosixTag.begin(), kPosixTag.end()), true, true,
         true},
        {tag_second, true, true, true}, // any 16-byte slot may carry it
        {std::vector<uint8_t>(kPosixTag.begin(), kPosixTag.end()), false, true,
         false},
        {other_tag, true, false, false},
        {std::vector<uint8_t>{}, true, false, false},
        {std::nullopt, true, false, false},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(::testing::Message()
                     << c.policy << " " << (c.data ? c.data->size() : 99));
        smb2_negotiate_policy p = samba_policy();
        p.posix_extensions = c.policy;
        NegReq r;
        if (c.data)
            r.contexts = {preauth_ctx(),
                          {SMB2_POSIX_EXTENSIONS_AVAILABLE, *c.data}};
        std::vector<uint8_t> buf = build(r);
        smb2_negotiate_req req;
        ASSERT_PROTO_ERR(parse(buf, &req), SMBD_E_OK);
        EXPECT_EQ(req.posix, c.parsed);
        smb2_negotiated out;
        smb2_negotiate_decide(&p, &req, &out);
        EXPECT_EQ(out.posix_context, c.want);
    }

    // not before 3.1.1, even with the tag (there are no contexts then)
    smb2_negotiate_policy p = samba_policy();
    p.max_dialect = SMB2_DIALECT_302;
    NegReq r;
    r.dialects = {SMB2_DIALECT_302, SMB2_DIALECT_311};
    r.contexts = {preauth_ctx(), posix_ctx()};
    EXPECT_FALSE(decide(p, r).posix_context);
}

TEST(Smb2NegotiateDecide, ContextsIgnoredWhen311NotOffered)
{
    NegReq r;
    r.dialects = {SMB2_DIALECT_300, SMB2_DIALECT_302};
    r.contexts = {};
    r.context_offset = 0xdeadbeef; // garbage is never looked at
    r.context_count = 7;
    std::vector<uint8_t> buf = build(r);
    smb2_negotiate_req req;
    ASSERT_PROTO_ERR(parse(buf, &req), SMBD_E_OK);
    EXPECT_EQ(req.context_count, 0);
    EXPECT_FALSE(req.preauth_hashes.present);
    EXPECT_FALSE(req.ciphers.present);

    smb2_negotiate_policy p = samba_policy();
    smb2_negotiated out;
    smb2_negotiate_decide(&p, &req, &out);
    EXPECT_EQ(out.status, NT_STATUS_SUCCESS);
    EXPECT_EQ(out.dialect, SMB2_DIALECT_302);
    EXPECT_FALSE(out.encryption_context || out.signing_context ||
                 out.posix_context);
}

TEST(Smb2NegotiateDecide, Smb311ContextsIgnoredWhenPolicyStopsAt302)
{
    // parsed (3.1.1 was offered) but not answered: 3.0.2 has no contexts
    smb2_negotiate_policy p = samba_policy();
    p.max_dialect = SMB2_DIALECT_302;
    std::vector<uint8_t> resp = respond(p, linux_3any_request());
    ASSERT_EQ(resp.size(), 128u + kSecBlob.size());
    EXPECT_EQ(smbd_get_le16(&resp[64 + 0x04]), SMB2_DIALECT_302);
    EXPECT_EQ(smbd_get_le16(&resp[64 + 0x06]), 0);  // NegotiateContextCount
    EXPECT_EQ(smbd_get_le32(&resp[64 + 0x3c]), 0u); // NegotiateContextOffset
    EXPECT_TRUE(smbd_get_le32(&resp[64 + 0x18]) & SMB2_GLOBAL_CAP_ENCRYPTION);
}

// Samba's smb311_capabilities_check(): the signing algorithm and cipher in
// force must be in smbd's lists, or NEGOTIATE fails with INVALID_PARAMETER
// (which is how removing AES-128-CMAC/-CCM disables 3.0 and 3.0.2).
TEST(Smb2NegotiateDecide, AlgorithmsInForceMustBeInPolicyLists)
{
    struct Case {
        const char *what;
        std::vector<uint16_t> signing, ciphers;
        uint16_t dialect;
        uint32_t client_caps;
        std::optional<std::vector<uint16_t>> client_signing;
        uint32_t want;
    } cases[] = {
        {"3.0.2 needs CMAC",
         {SMB2_SIGNING_AES128_GMAC, SMB2_SIGNING_HMAC_SHA256},
         {SMB2_ENCRYPTION_AES128_CCM},
         SMB2_DIALECT_302,
         kLinuxCaps,
         std::nullopt,
         NT_STATUS_INVALID_PARAMETER},
        {"2.1 needs HMAC",
         {SMB2_SIGNING_AES128_GMAC, SMB2_SIGNING_AES128_CMAC},
         {SMB2_ENCRYPTION_AES128_CCM},
         SMB2_DIALECT_210,
         kLinuxCaps,
         std::nullopt,
         NT_STATUS_INVALID_PARAMETER},
        {"3.0.2 encryption needs CCM",
         {SMB2_SIGNING_AES128_CMAC},
         {SMB2_ENCRYPTION_AES128_GCM},
         SMB2_DIALECT_302,
         kLinuxCaps,
         std::nullopt,
         NT_STATUS_INVALID_PARAMETER},
        {"3.0.2 without encryption",
         {SMB2_SIGNING_AES128_CMAC},
         {SMB2_ENCRYPTION_AES128_GCM},
         SMB2_DIALECT_302,
         kLinuxCaps & ~SMB2_GLOBAL_CAP_ENCRYPTION,
         std::nullopt,
         NT_STATUS_SUCCESS},
        {"3.1.1 GMAC negotiated",
         {SMB2_SIGNING_AES128_GMAC},
         {SMB2_ENCRYPTION_AES128_GCM},
         SMB2_DIALECT_311,
         kLinuxCaps,
         std::vector<uint16_t>{SMB2_SIGNING_AES128_GMAC},
         NT_STATUS_SUCCESS},
        {"3.1.1 falls back to CMAC",
         {SMB2_SIGNING_AES128_GMAC},
         {SMB2_ENCRYPTION_AES128_GCM},
         SMB2_DIALECT_311,
         kLinuxCaps,
         std::vector<uint16_t>{SMB2_SIGNING_AES128_CMAC},
         NT_STATUS_INVALID_PARAMETER},
        {"no cipher configured",
         {SMB2_SIGNING_AES128_CMAC},
         {},
         SMB2_DIALECT_311,
         kLinuxCaps & ~SMB2_GLOBAL_CAP_ENCRYPTION,
         std::nullopt,
         NT_STATUS_INVALID_PARAMETER},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.what);
        smb2_negotiate_policy p = samba_policy();
        p.min_dialect = SMB2_DIALECT_202;
        std::ranges::copy(c.signing, p.signing_algorithms);
        p.signing_algorithm_count = uint8_t(c.signing.size());
        std::ranges::copy(c.ciphers, p.ciphers);
        p.cipher_count = uint8_t(c.ciphers.size());
        NegReq r;
        r.dialects = {c.dialect};
        r.capabilities = c.client_caps;
        r.contexts = {preauth_ctx(), cipher_ctx({SMB2_ENCRYPTION_AES128_GCM})};
        if (c.client_signing)
            r.contexts.push_back(signing_ctx(*c.client_signing));
        EXPECT_EQ(decide(p, r).status, c.want);
    }
}

// ===========================================================================
// NEGOTIATE request validation: one rule per test
// ===========================================================================

smbd_proto_error parse_built(const NegReq &r)
{
    smb2_negotiate_req req;
    return parse(build(r), &req);
}

TEST(Smb2NegotiateParse, RejectsOtherCommand)
{
    for (uint16_t cmd : {SMB2_SESSION_SETUP, 0x0003, 0x0012}) {
        NegReq r;
        r.hdr.command = cmd;
        EXPECT_PROTO_ERR(parse_built(r), SMBD_E_SMB2_UNEXPECTED_COMMAND) << cmd;
    }
}

TEST(Smb2NegotiateParse, RejectsCompound)
{
    NegReq r;
    r.hdr.next_command = 0x78;
    EXPECT_PROTO_ERR(parse_built(r), SMBD_E_SMB2_COMPOUND);
    r.hdr.next_command = 0;
    r.hdr.flags = SMB2_FLAGS_RELATED_OPERATIONS;
    EXPECT_PROTO_ERR(parse_built(r), SMBD_E_SMB2_COMPOUND);
}

TEST(Smb2NegotiateParse, RejectsMessageIdNotZero)
{
    for (uint64_t mid : {1ull, 2ull, 0x8000000000000000ull, ~0ull}) {
        NegReq r;
        r.hdr.message_id = mid;
        EXPECT_PROTO_ERR(parse_built(r), SMBD_E_SMB2_SEQUENCE) << mid;
    }
}

TEST(Smb2NegotiateParse, RejectsCreditChargeAboveOne)
{
    for (uint16_t charge : {2, 3, 0xffff}) {
        NegReq r;
        r.hdr.credit_charge = charge;
        EXPECT_PROTO_ERR(parse_built(r), SMBD_E_SMB2_SEQUENCE) << charge;
    }
    // 0 (what Linux sends) and 1 are the first request's charge
    for (uint16_t charge : {0, 1}) {
        NegReq r;
        r.hdr.credit_charge = charge;
        EXPECT_PROTO_ERR(parse_built(r), SMBD_E_OK) << charge;
    }
}

TEST(Smb2NegotiateParse, RejectsBodyStructureSizeNot36)
{
    for (uint16_t size : {0, 35, 37, 65}) {
        NegReq r;
        r.structure_size = size;
        EXPECT_PROTO_ERR(parse_built(r), SMBD_E_SMB2_STRUCTURE_SIZE) << size;
    }
}

TEST(Smb2NegotiateParse, RejectsTruncatedBody)
{
    std::vector<uint8_t> full = linux_311_request();
    for (size_t len : {64, 65, 66, 90, 99}) {
        std::vector<uint8_t> cut(full.begin(), full.begin() + long(len));
        smb2_negotiate_req req;
        EXPECT_PROTO_ERR(parse(cut, &req), SMBD_E_TRUNCATED) << len;
    }
}

TEST(Smb2NegotiateParse, RejectsZeroDialectCount)
{
    NegReq r;
    r.dialect_count = 0;
    EXPECT_PROTO_ERR(parse_built(r), SMBD_E_SMB2_DIALECT_COUNT);
}

TEST(Smb2NegotiateParse, RejectsDialectsPastEnd)
{
    // the 3.0.2 request ends with its one dialect
    std::vector<uint8_t> buf = linux_302_request();
    buf[66] = 2;
    smb2_negotiate_req req;
    EXPECT_PROTO_ERR(parse(buf, &req), SMBD_E_SMB2_DIALECT_COUNT);

    buf[66] = 1;
    buf.pop_back(); // half a dialect
    EXPECT_PROTO_ERR(parse(buf, &req), SMBD_E_SMB2_DIALECT_COUNT);
}

TEST(Smb2NegotiateParse, RejectsContextOffsetNotTheAlignedOffset)
{
    // one dialect ends at 102: the contexts must start at 104
    for (uint32_t off : {0u, 100u, 102u, 103u, 105u, 112u, 0xffffffffu}) {
        NegReq r;
        r.context_offset = off;
        EXPECT_PROTO_ERR(parse_built(r), SMBD_E_SMB2_CONTEXT_OFFSET) << off;
    }
    // three dialects end at 106: 112
    NegReq r;
    r.dialects = {SMB2_DIALECT_300, SMB2_DIALECT_302, SMB2_DIALECT_311};
    r.context_offset = 104;
    EXPECT_PROTO_ERR(parse_built(r), SMBD_E_SMB2_CONTEXT_OFFSET);
}

TEST(Smb2NegotiateParse, RejectsContextOffsetPastEnd)
{
    // the PDU stops after the dialect, before the aligned offset 104
    for (uint16_t count : {0, 1}) {
        NegReq r;
        r.contexts = {};
        r.context_offset = 104;
        r.context_count = count;
        std::vector<uint8_t> buf = build(r);
        ASSERT_EQ(buf.size(), 102u);
        smb2_negotiate_req req;
        EXPECT_PROTO_ERR(parse(buf, &req), SMBD_E_SMB2_CONTEXT_OFFSET) << count;
    }
}

TEST(Smb2NegotiateParse, RejectsTruncatedContextHeader)
{
    for (size_t extra : {0, 1, 4, 7}) {
        NegReq r;
        r.contexts = {};
        r.context_count = 1;
        std::vector<uint8_t> buf = build(r);
        buf.resize(104 + extra, 0); // padding, then part of a context header
        smb2_negotiate_req req;
        EXPECT_PROTO_ERR(parse(buf, &req), SMBD_E_SMB2_CONTEXT_TRUNCATED)
            << extra;
    }
}

TEST(Smb2NegotiateParse, RejectsContextDataPastEnd)
{
    std::vector<uint8_t> buf = linux_311_request();
    buf.pop_back(); // the signing context's data is one byte short
    smb2_negotiate_req req;
    EXPECT_PROTO_ERR(parse(buf, &req), SMBD_E_SMB2_CONTEXT_TRUNCATED);

    // a DataLength far past the PDU
    buf = linux_311_request();
    smbd_put_le16(&buf[104 + 2], 0xfff0);
    EXPECT_PROTO_ERR(parse(buf, &req), SMBD_E_SMB2_CONTEXT_TRUNCATED);
}

TEST(Smb2NegotiateParse, RejectsDuplicateContext)
{
    // MS-SMB2 3.3.5.4: each of these may be given once
    const Ctx twice[] = {
        preauth_ctx(),
        cipher_ctx({SMB2_ENCRYPTION_AES128_GCM}),
        signing_ctx({SMB2_SIGNING_AES128_CMAC}),
        rdma_ctx({0x0001}),
        compression_ctx({0x0001}),
    };
    for (const Ctx &c : twice) {
        NegReq r;
        r.contexts = {preauth_ctx(), posix_ctx(), c};
        if (c.type != SMB2_PREAUTH_INTEGRITY_CAPABILITIES)
            r.contexts.push_back(c);
        EXPECT_PROTO_ERR(parse_built(r), SMBD_E_SMB2_CONTEXT_DUPLICATE)
            << c.type;
    }
}

TEST(Smb2NegotiateParse, RejectsContextListingNoAlgorithm)
{
    const Ctx empty[] = {
        {SMB2_PREAUTH_INTEGRITY_CAPABILITIES, preauth_data({})},
        cipher_ctx({}),
        signing_ctx({}),
        rdma_ctx({}),
        compression_ctx({}),
    };
    for (const Ctx &c : empty) {
        NegReq r;
        r.contexts = {c};
        if (c.type != SMB2_PREAUTH_INTEGRITY_CAPABILITIES)
            r.contexts.insert(r.contexts.begin(), preauth_ctx());
        EXPECT_PROTO_ERR(parse_built(r), SMBD_E_SMB2_CONTEXT_EMPTY) << c.type;
    }
}

TEST(Smb2NegotiateParse, RejectsPreauthSaltPastData)
{
    const std::vector<uint8_t> bad[] = {
        preauth_data({SMB2_PREAUTH_INTEGRITY_SHA512}, 33,
                     32), // SaltLength too long
        preauth_data({SMB2_PREAUTH_INTEGRITY_SHA512}, 32, 31),
        {0x02, 0x00, 0x00, 0x00, 0x01, 0x00}, // two hashes, one present
        {0x01, 0x00, 0x00},                   // shorter than the counts
    };
    for (const auto &data : bad) {
        NegReq r;
        r.contexts = {{SMB2_PREAUTH_INTEGRITY_CAPABILITIES, data}};
        EXPECT_PROTO_ERR(parse_built(r), SMBD_E_SMB2_CONTEXT_TRUNCATED)
            << data.size();
    }
}

TEST(Smb2NegotiateParse, RejectsAlgorithmListPastData)
{
    const Ctx bad[] = {
        {SMB2_ENCRYPTION_CAPABILITIES, {0x03, 0x00, 0x02, 0x00, 0x01, 0x00}},
        {SMB2_ENCRYPTION_CAPABILITIES, {0x01}},
        {SMB2_SIGNING_CAPABILITIES, {}},
        {SMB2_SIGNING_CAPABILITIES, {0x02, 0x00, 0x01, 0x00, 0x02}},
        {SMB2_RDMA_TRANSFORM_CAPABILITIES, {0x01, 0x00, 0, 0, 0, 0, 0, 0}},
        {SMB2_RDMA_TRANSFORM_CAPABILITIES, {0x01, 0x00, 0, 0, 0}},
        {SMB2_COMPRESSION_CAPABILITIES, {0x01, 0x00, 0, 0, 0, 0, 0, 0, 0x01}},
    };
    for (const Ctx &c : bad) {
        NegReq r;
        r.contexts = {preauth_ctx(), c};
        EXPECT_PROTO_ERR(parse_built(r), SMBD_E_SMB2_CONTEXT_TRUNCATED)
            << c.type << "/" << c.data.size();
    }
}

TEST(Smb2NegotiateParse, RejectsPosixContextLengthNotMultipleOf16)
{
    for (size_t len : {1, 15, 17, 31}) {
        NegReq r;
        r.contexts = {
            preauth_ctx(),
            {SMB2_POSIX_EXTENSIONS_AVAILABLE, std::vector<uint8_t>(len)}};
        EXPECT_PROTO_ERR(parse_built(r), SMBD_E_SMB2_CONTEXT_TRUNCATED) << len;
    }
}

TEST(Smb2NegotiateParse, RejectsFewerContextsThanCount)
{
    NegReq r;
    r.contexts = {preauth_ctx(), cipher_ctx({SMB2_ENCRYPTION_AES128_GCM})};
    r.context_count = 3;
    EXPECT_PROTO_ERR(parse_built(r), SMBD_E_SMB2_CONTEXT_TRUNCATED);
}

TEST(Smb2NegotiateParse, ContextsBeyondCountAreNotRead)
{
    // only NegotiateContextCount contexts exist; the duplicate after them
    // is trailing data
    NegReq r;
    r.contexts = {preauth_ctx(), cipher_ctx({SMB2_ENCRYPTION_AES128_GCM}),
                  preauth_ctx()};
    r.context_count = 2;
    std::vector<uint8_t> buf = build(r);
    smb2_negotiate_req req;
    ASSERT_PROTO_ERR(parse(buf, &req), SMBD_E_OK);
    EXPECT_EQ(req.context_count, 2);
    EXPECT_TRUE(req.ciphers.present);
}

TEST(Smb2NegotiateParse, IgnoresNetnameTransportAndUnknownContexts)
{
    NegReq r;
    r.contexts = {
        {SMB2_NETNAME_NEGOTIATE_CONTEXT_ID, {'s', 0, 'r', 0, 'v', 0}},
        {SMB2_TRANSPORT_CAPABILITIES, {0x01, 0, 0, 0}},
        {0x7777, {1, 2, 3}},
        {SMB2_NETNAME_NEGOTIATE_CONTEXT_ID, {}}, // repeated: not a listed rule
        preauth_ctx(),
    };
    std::vector<uint8_t> buf = build(r);
    smb2_negotiate_req req;
    ASSERT_PROTO_ERR(parse(buf, &req), SMBD_E_OK);
    EXPECT_EQ(req.context_count, 5);
    EXPECT_TRUE(req.preauth_hashes.present);
    EXPECT_FALSE(req.ciphers.present || req.signing_algorithms.present ||
                 req.rdma_transforms.present || req.compression || req.posix);
}

TEST(Smb2NegotiateParse, RecordsRdmaTransformsAndCompression)
{
    NegReq r;
    r.contexts = {preauth_ctx(), rdma_ctx({0x0000, 0x0002}),
                  compression_ctx({0x0001})};
    std::vector<uint8_t> buf = build(r);
    smb2_negotiate_req req;
    ASSERT_PROTO_ERR(parse(buf, &req), SMBD_E_OK);
    EXPECT_EQ(ids(req.rdma_transforms),
              (std::vector<uint16_t>{0x0000, 0x0002}));
    EXPECT_TRUE(req.compression);
}

} // namespace
