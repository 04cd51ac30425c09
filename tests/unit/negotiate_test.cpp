// MS-SMBD 2.2.1 / 2.2.2 Negotiate Request and Response: byte-exact vectors,
// one test per validation rule, and the parameter combination on both sides.
#include "negotiate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <ostream>
#include <vector>

// Failures print "VERSION" instead of a bare number.
static void PrintTo(smbd_proto_error err, std::ostream *os)
{
    *os << "SMBD_E_" << smbd_proto_error_name(err);
}

namespace {

using Bytes = std::vector<uint8_t>;

// The Negotiate Request of the Linux cifs client (fs/smb/client/smbdirect.c
// defaults: 255 credits, 1364-byte sends and receives, 1 MiB fragmented).
constexpr std::array<uint8_t, SMBD_NEGOTIATE_REQ_SIZE> kCifsReq = {
    0x00, 0x01,             // MinVersion 0x0100
    0x00, 0x01,             // MaxVersion 0x0100
    0x00, 0x00,             // Reserved
    0xff, 0x00,             // CreditsRequested 255
    0x54, 0x05, 0x00, 0x00, // PreferredSendSize 1364
    0x54, 0x05, 0x00, 0x00, // MaxReceiveSize 1364
    0x00, 0x00, 0x10, 0x00, // MaxFragmentedSize 1048576
};

// A success response; every size differs so that swapped fields show up.
constexpr std::array<uint8_t, SMBD_NEGOTIATE_RESP_SIZE> kSuccessResp = {
    0x00, 0x01,             // MinVersion 0x0100
    0x00, 0x01,             // MaxVersion 0x0100
    0x00, 0x01,             // NegotiatedVersion 0x0100
    0x00, 0x00,             // Reserved
    0xff, 0x00,             // CreditsRequested 255
    0x10, 0x00,             // CreditsGranted 16
    0x00, 0x00, 0x00, 0x00, // Status STATUS_SUCCESS
    0x00, 0x00, 0x80, 0x00, // MaxReadWriteSize 8388608
    0x54, 0x05, 0x00, 0x00, // PreferredSendSize 1364
    0x00, 0x20, 0x00, 0x00, // MaxReceiveSize 8192
    0x00, 0x00, 0x10, 0x00, // MaxFragmentedSize 1048576
};

// MS-SMBD 3.1.5.3: a failure response carries only the versions and Status.
constexpr std::array<uint8_t, SMBD_NEGOTIATE_RESP_SIZE> kFailureResp = {
    0x00, 0x01,             // MinVersion 0x0100
    0x00, 0x01,             // MaxVersion 0x0100
    0x00, 0x00,             // NegotiatedVersion 0
    0x00, 0x00,             // Reserved
    0x00, 0x00,             // CreditsRequested 0
    0x00, 0x00,             // CreditsGranted 0
    0xbb, 0x00, 0x00, 0xc0, // Status STATUS_NOT_SUPPORTED
    0x00, 0x00, 0x00, 0x00, // MaxReadWriteSize 0
    0x00, 0x00, 0x00, 0x00, // PreferredSendSize 0
    0x00, 0x00, 0x00, 0x00, // MaxReceiveSize 0
    0x00, 0x00, 0x00, 0x00, // MaxFragmentedSize 0
};

// Field offsets, for the malformed variants.
constexpr size_t kReqMinVersion = 0, kReqMaxVersion = 2, kReqReserved = 4,
                 kReqCredits = 6, kReqPreferredSend = 8, kReqMaxReceive = 12,
                 kReqMaxFragmented = 16;
constexpr size_t kRespNegotiated = 4, kRespReserved = 6,
                 kRespCreditsRequested = 8, kRespCreditsGranted = 10,
                 kRespStatus = 12, kRespPreferredSend = 20,
                 kRespMaxReceive = 24, kRespMaxFragmented = 28;

template <size_t N> Bytes Copy(const std::array<uint8_t, N> &a)
{
    return Bytes(a.begin(), a.end());
}

Bytes With16(Bytes b, size_t off, uint16_t v)
{
    smbd_put_le16(b.data() + off, v);
    return b;
}

Bytes With32(Bytes b, size_t off, uint32_t v)
{
    smbd_put_le32(b.data() + off, v);
    return b;
}

smbd_proto_error ParseReq(const Bytes &b, smbd_negotiate_req *req = nullptr)
{
    smbd_negotiate_req tmp;
    return smbd_negotiate_req_parse(b.data(), b.size(), req ? req : &tmp);
}

smbd_proto_error ParseResp(const Bytes &b, smbd_negotiate_resp *resp = nullptr)
{
    smbd_negotiate_resp tmp;
    return smbd_negotiate_resp_parse(b.data(), b.size(), resp ? resp : &tmp);
}

// What the cifs client is configured with (the request above).
constexpr smbd_local_params kCifsLocal = {
    .receive_credit_max = 255,
    .send_credit_target = 255,
    .max_send_size = 1364,
    .max_receive_size = 1364,
    .max_fragmented_size = 1048576,
    .max_read_write_size = 1048576,
};

// --- Negotiate Request: vectors ---------------------------------------------

TEST(NegotiateReq, ParsesCifsClientRequest)
{
    smbd_negotiate_req req;
    ASSERT_EQ(ParseReq(Copy(kCifsReq), &req), SMBD_E_OK);
    EXPECT_EQ(req.min_version, 0x0100);
    EXPECT_EQ(req.max_version, 0x0100);
    EXPECT_EQ(req.credits_requested, 255);
    EXPECT_EQ(req.preferred_send_size, 1364u);
    EXPECT_EQ(req.max_receive_size, 1364u);
    EXPECT_EQ(req.max_fragmented_size, 1048576u);
}

TEST(NegotiateReq, BuildsCifsClientRequestBytes)
{
    const smbd_negotiate_req req = {
        .min_version = SMBD_VERSION_1,
        .max_version = SMBD_VERSION_1,
        .credits_requested = 255,
        .preferred_send_size = 1364,
        .max_receive_size = 1364,
        .max_fragmented_size = 1048576,
    };
    std::array<uint8_t, SMBD_NEGOTIATE_REQ_SIZE> out;
    out.fill(0xaa); // Reserved must be written as 0, not left alone
    smbd_negotiate_req_build(&req, out.data());
    EXPECT_EQ(out, kCifsReq);
}

// Distinct values in every field: a swapped offset in parse or build fails.
TEST(NegotiateReq, RoundTripsDistinctFields)
{
    const smbd_negotiate_req in = {
        .min_version = 0x0100,
        .max_version = 0x0302,
        .credits_requested = 0x1234,
        .preferred_send_size = 0x01020304,
        .max_receive_size = 0x05060708,
        .max_fragmented_size = 0x090a0b0c,
    };
    Bytes b(SMBD_NEGOTIATE_REQ_SIZE);
    smbd_negotiate_req_build(&in, b.data());
    smbd_negotiate_req out;
    ASSERT_EQ(ParseReq(b, &out), SMBD_E_OK);
    EXPECT_EQ(out.min_version, in.min_version);
    EXPECT_EQ(out.max_version, in.max_version);
    EXPECT_EQ(out.credits_requested, in.credits_requested);
    EXPECT_EQ(out.preferred_send_size, in.preferred_send_size);
    EXPECT_EQ(out.max_receive_size, in.max_receive_size);
    EXPECT_EQ(out.max_fragmented_size, in.max_fragmented_size);
}

// --- Negotiate Request: one test per rule -----------------------------------

// Each length is its own heap buffer, so ASan catches any read past it.
TEST(NegotiateReq, RejectsTruncated)
{
    for (size_t len = 0; len < SMBD_NEGOTIATE_REQ_SIZE; len++) {
        SCOPED_TRACE(len);
        EXPECT_EQ(ParseReq(Bytes(kCifsReq.begin(), kCifsReq.begin() + len)),
                  SMBD_E_TRUNCATED);
    }
}

// The spec only sets a minimum length; a longer message is not an error.
TEST(NegotiateReq, AcceptsTrailingBytes)
{
    Bytes b = Copy(kCifsReq);
    b.resize(b.size() + 12, 0xee);
    EXPECT_EQ(ParseReq(b), SMBD_E_OK);
}

TEST(NegotiateReq, RejectsVersionRangeWithout0100)
{
    const std::array<std::pair<uint16_t, uint16_t>, 6> ranges = {{
        {0x0101, 0x0200}, // min above 0x0100
        {0x0200, 0x0200},
        {0xffff, 0xffff},
        {0x0000, 0x00ff}, // max below 0x0100
        {0x0000, 0x0000},
        {0x0101, 0x00ff}, // inverted
    }};
    for (auto [min, max] : ranges) {
        SCOPED_TRACE(testing::Message() << std::hex << min << ".." << max);
        Bytes b = With16(Copy(kCifsReq), kReqMinVersion, min);
        EXPECT_EQ(ParseReq(With16(b, kReqMaxVersion, max)), SMBD_E_VERSION);
    }
}

TEST(NegotiateReq, AcceptsVersionRangeIncluding0100)
{
    const std::array<std::pair<uint16_t, uint16_t>, 4> ranges = {{
        {0x0100, 0x0100},
        {0x0000, 0x0100},
        {0x0100, 0x0200},
        {0x0001, 0xffff},
    }};
    for (auto [min, max] : ranges) {
        SCOPED_TRACE(testing::Message() << std::hex << min << ".." << max);
        Bytes b = With16(Copy(kCifsReq), kReqMinVersion, min);
        EXPECT_EQ(ParseReq(With16(b, kReqMaxVersion, max)), SMBD_E_OK);
    }
}

TEST(NegotiateReq, RejectsZeroCreditsRequested)
{
    Bytes b = Copy(kCifsReq);
    EXPECT_EQ(ParseReq(With16(b, kReqCredits, 0)),
              SMBD_E_ZERO_CREDITS_REQUESTED);
    EXPECT_EQ(ParseReq(With16(b, kReqCredits, 1)), SMBD_E_OK);
}

TEST(NegotiateReq, RejectsMaxReceiveSizeBelow128)
{
    Bytes b = Copy(kCifsReq);
    EXPECT_EQ(ParseReq(With32(b, kReqMaxReceive, 0)),
              SMBD_E_RECEIVE_SIZE_TOO_SMALL);
    EXPECT_EQ(ParseReq(With32(b, kReqMaxReceive, 127)),
              SMBD_E_RECEIVE_SIZE_TOO_SMALL);
    EXPECT_EQ(ParseReq(With32(b, kReqMaxReceive, 128)), SMBD_E_OK);
}

TEST(NegotiateReq, RejectsMaxFragmentedSizeBelow128KiB)
{
    Bytes b = Copy(kCifsReq);
    EXPECT_EQ(ParseReq(With32(b, kReqMaxFragmented, 131071)),
              SMBD_E_FRAGMENTED_SIZE_TOO_SMALL);
    EXPECT_EQ(ParseReq(With32(b, kReqMaxFragmented, 131072)), SMBD_E_OK);
}

// MS-SMBD 3.1.5.6: our receive size is min(ours, PreferredSendSize) but not
// below 128; a small PreferredSendSize is not an error.
TEST(NegotiateReq, ClampsReceiveSizeForPreferredSendSizeBelow128)
{
    const smbd_local_params local = {255, 255, 1364, 1364, 1048576, 8 << 20};
    smbd_negotiate_req req;
    smbd_conn_params conn;
    Bytes b = Copy(kCifsReq);
    ASSERT_EQ(smbd_negotiate_req_parse(With32(b, kReqPreferredSend, 64).data(),
                                       b.size(), &req),
              SMBD_E_OK);
    smbd_negotiate_server_params(&local, &req, &conn);
    EXPECT_EQ(conn.max_receive_size, 128u);
    ASSERT_EQ(smbd_negotiate_req_parse(With32(b, kReqPreferredSend, 200).data(),
                                       b.size(), &req),
              SMBD_E_OK);
    smbd_negotiate_server_params(&local, &req, &conn);
    EXPECT_EQ(conn.max_receive_size, 200u);
}

// "sender 0, receiver ignores"
TEST(NegotiateReq, IgnoresReserved)
{
    EXPECT_EQ(ParseReq(With16(Copy(kCifsReq), kReqReserved, 0xffff)),
              SMBD_E_OK);
}

// The server answers VERSION with a failure response and everything else by
// disconnecting, so a bad version must win over any other broken field.
TEST(NegotiateReq, ReportsVersionBeforeOtherRules)
{
    Bytes b(SMBD_NEGOTIATE_REQ_SIZE, 0); // versions 0, credits 0, sizes 0
    EXPECT_EQ(ParseReq(b), SMBD_E_VERSION);
}

// --- Server side: combination and responses --------------------------------

TEST(NegotiateServer, CombinesCifsRequestWithOwnParams)
{
    const smbd_local_params local = {
        .receive_credit_max = 255,
        .send_credit_target = 255,
        .max_send_size = 1364,
        .max_receive_size = 8192,
        .max_fragmented_size = 1048576,
        .max_read_write_size = 8388608,
    };
    smbd_negotiate_req req;
    ASSERT_EQ(ParseReq(Copy(kCifsReq), &req), SMBD_E_OK);
    smbd_conn_params conn;
    smbd_negotiate_server_params(&local, &req, &conn);
    EXPECT_EQ(conn.receive_credit_max, 255);
    EXPECT_EQ(conn.receive_credit_target, 255);
    EXPECT_EQ(conn.send_credit_target, 255);
    EXPECT_EQ(conn.max_send_size, 1364u);    // min(1364, peer receive 1364)
    EXPECT_EQ(conn.max_receive_size, 1364u); // min(8192, peer send 1364)
    EXPECT_EQ(conn.max_fragmented_send_size, 1048576u);
    EXPECT_EQ(conn.max_fragmented_recv_size, 1048576u);
    EXPECT_EQ(conn.max_read_write_size, 8388608u);
}

// Each size is the smaller of ours and the peer's, whichever side is smaller.
TEST(NegotiateServer, TakesTheSmallerSizes)
{
    struct Case {
        uint32_t ours, peers, want;
    };
    for (Case c : {Case{8192, 1364, 1364}, Case{1364, 8192, 1364},
                   Case{4096, 4096, 4096}}) {
        SCOPED_TRACE(testing::Message() << c.ours << " vs " << c.peers);
        smbd_local_params local = kCifsLocal;
        local.max_send_size = c.ours;
        local.max_receive_size = c.ours;
        smbd_negotiate_req req;
        ASSERT_EQ(ParseReq(Copy(kCifsReq), &req), SMBD_E_OK);
        req.preferred_send_size = c.peers;
        req.max_receive_size = c.peers;
        smbd_conn_params conn;
        smbd_negotiate_server_params(&local, &req, &conn);
        EXPECT_EQ(conn.max_send_size, c.want);
        EXPECT_EQ(conn.max_receive_size, c.want);
    }
}

// We never post more than ReceiveCreditMax, whatever the peer asks for.
TEST(NegotiateServer, ClampsReceiveCreditTargetToOurMax)
{
    struct Case {
        uint16_t requested, max, want;
    };
    for (Case c : {Case{255, 16, 16}, Case{10, 255, 10}, Case{16, 16, 16},
                   Case{65535, 65535, 65535}}) {
        SCOPED_TRACE(testing::Message() << c.requested << " max " << c.max);
        smbd_local_params local = kCifsLocal;
        local.receive_credit_max = c.max;
        smbd_negotiate_req req;
        ASSERT_EQ(
            ParseReq(With16(Copy(kCifsReq), kReqCredits, c.requested), &req),
            SMBD_E_OK);
        smbd_conn_params conn;
        smbd_negotiate_server_params(&local, &req, &conn);
        EXPECT_EQ(conn.receive_credit_target, c.want);
        EXPECT_EQ(conn.receive_credit_max, c.max);
    }
}

// Our answer to the cifs request: the success response, byte for byte.
TEST(NegotiateServer, BuildsSuccessResponseBytes)
{
    smbd_local_params local = kCifsLocal;
    local.send_credit_target = 32;
    local.max_read_write_size = 8388608;
    smbd_negotiate_req req;
    ASSERT_EQ(ParseReq(Copy(kCifsReq), &req), SMBD_E_OK);
    smbd_conn_params conn;
    smbd_negotiate_server_params(&local, &req, &conn);
    smbd_negotiate_resp resp;
    smbd_negotiate_resp_success(&conn, 200, &resp);

    const std::array<uint8_t, SMBD_NEGOTIATE_RESP_SIZE> want = {
        0x00, 0x01,             // MinVersion 0x0100
        0x00, 0x01,             // MaxVersion 0x0100
        0x00, 0x01,             // NegotiatedVersion 0x0100
        0x00, 0x00,             // Reserved
        0x20, 0x00,             // CreditsRequested 32: our send target
        0xc8, 0x00,             // CreditsGranted 200: receives posted
        0x00, 0x00, 0x00, 0x00, // Status STATUS_SUCCESS
        0x00, 0x00, 0x80, 0x00, // MaxReadWriteSize 8388608
        0x54, 0x05, 0x00, 0x00, // PreferredSendSize 1364: our MaxSendSize
        0x54, 0x05, 0x00, 0x00, // MaxReceiveSize 1364
        0x00, 0x00, 0x10, 0x00, // MaxFragmentedSize 1048576: our reassembly
    };
    std::array<uint8_t, SMBD_NEGOTIATE_RESP_SIZE> out;
    out.fill(0xaa);
    smbd_negotiate_resp_build(&resp, out.data());
    EXPECT_EQ(out, want);
}

TEST(NegotiateServer, BuildsFailureResponseBytes)
{
    smbd_negotiate_resp resp;
    memset(&resp, 0x5a, sizeof(resp)); // must be cleared, not inherited
    smbd_negotiate_resp_failure(&resp);
    std::array<uint8_t, SMBD_NEGOTIATE_RESP_SIZE> out;
    out.fill(0xaa);
    smbd_negotiate_resp_build(&resp, out.data());
    EXPECT_EQ(out, kFailureResp);
}

// --- Negotiate Response: vectors --------------------------------------------

TEST(NegotiateResp, ParsesSuccess)
{
    smbd_negotiate_resp resp;
    ASSERT_EQ(ParseResp(Copy(kSuccessResp), &resp), SMBD_E_OK);
    EXPECT_EQ(resp.min_version, 0x0100);
    EXPECT_EQ(resp.max_version, 0x0100);
    EXPECT_EQ(resp.negotiated_version, 0x0100);
    EXPECT_EQ(resp.credits_requested, 255);
    EXPECT_EQ(resp.credits_granted, 16);
    EXPECT_EQ(resp.status, SMBD_STATUS_SUCCESS);
    EXPECT_EQ(resp.max_read_write_size, 8388608u);
    EXPECT_EQ(resp.preferred_send_size, 1364u);
    EXPECT_EQ(resp.max_receive_size, 8192u);
    EXPECT_EQ(resp.max_fragmented_size, 1048576u);
}

TEST(NegotiateResp, BuildsSuccessBytes)
{
    smbd_negotiate_resp resp;
    ASSERT_EQ(ParseResp(Copy(kSuccessResp), &resp), SMBD_E_OK);
    std::array<uint8_t, SMBD_NEGOTIATE_RESP_SIZE> out;
    out.fill(0xaa);
    smbd_negotiate_resp_build(&resp, out.data());
    EXPECT_EQ(out, kSuccessResp);
}

// The failure response parses far enough to report the peer's status.
TEST(NegotiateResp, ParsesFailureAsNegotiateFailed)
{
    smbd_negotiate_resp resp;
    EXPECT_EQ(ParseResp(Copy(kFailureResp), &resp), SMBD_E_NEGOTIATE_FAILED);
    EXPECT_EQ(resp.status, SMBD_STATUS_NOT_SUPPORTED);
}

// --- Negotiate Response: one test per rule ----------------------------------

TEST(NegotiateResp, RejectsTruncated)
{
    for (size_t len = 0; len < SMBD_NEGOTIATE_RESP_SIZE; len++) {
        SCOPED_TRACE(len);
        EXPECT_EQ(
            ParseResp(Bytes(kSuccessResp.begin(), kSuccessResp.begin() + len)),
            SMBD_E_TRUNCATED);
    }
}

TEST(NegotiateResp, RejectsStatusNotSuccess)
{
    for (uint32_t status :
         {SMBD_STATUS_NOT_SUPPORTED, 0x00000001u, 0x80000005u, 0xc0000001u}) {
        SCOPED_TRACE(testing::Message() << std::hex << status);
        EXPECT_EQ(ParseResp(With32(Copy(kSuccessResp), kRespStatus, status)),
                  SMBD_E_NEGOTIATE_FAILED);
    }
}

TEST(NegotiateResp, RejectsNegotiatedVersionNot0100)
{
    for (uint16_t v : {0x0000, 0x00ff, 0x0101, 0x0200}) {
        SCOPED_TRACE(testing::Message() << std::hex << v);
        EXPECT_EQ(ParseResp(With16(Copy(kSuccessResp), kRespNegotiated, v)),
                  SMBD_E_VERSION);
    }
}

TEST(NegotiateResp, RejectsZeroCreditsRequested)
{
    EXPECT_EQ(ParseResp(With16(Copy(kSuccessResp), kRespCreditsRequested, 0)),
              SMBD_E_ZERO_CREDITS_REQUESTED);
}

TEST(NegotiateResp, RejectsZeroCreditsGranted)
{
    Bytes b = Copy(kSuccessResp);
    EXPECT_EQ(ParseResp(With16(b, kRespCreditsGranted, 0)),
              SMBD_E_ZERO_CREDITS_GRANTED);
    EXPECT_EQ(ParseResp(With16(b, kRespCreditsGranted, 1)), SMBD_E_OK);
}

TEST(NegotiateResp, RejectsMaxReceiveSizeBelow128)
{
    Bytes b = Copy(kSuccessResp);
    EXPECT_EQ(ParseResp(With32(b, kRespMaxReceive, 127)),
              SMBD_E_RECEIVE_SIZE_TOO_SMALL);
    EXPECT_EQ(ParseResp(With32(b, kRespMaxReceive, 128)), SMBD_E_OK);
}

TEST(NegotiateResp, RejectsMaxFragmentedSizeBelow128KiB)
{
    Bytes b = Copy(kSuccessResp);
    EXPECT_EQ(ParseResp(With32(b, kRespMaxFragmented, 131071)),
              SMBD_E_FRAGMENTED_SIZE_TOO_SMALL);
    EXPECT_EQ(ParseResp(With32(b, kRespMaxFragmented, 131072)), SMBD_E_OK);
}

TEST(NegotiateResp, RejectsPreferredSendSizeBelow128)
{
    Bytes b = Copy(kSuccessResp);
    EXPECT_EQ(ParseResp(With32(b, kRespPreferredSend, 127)),
              SMBD_E_SEND_SIZE_TOO_SMALL);
    EXPECT_EQ(ParseResp(With32(b, kRespPreferredSend, 128)), SMBD_E_OK);
}

TEST(NegotiateResp, IgnoresReserved)
{
    EXPECT_EQ(ParseResp(With16(Copy(kSuccessResp), kRespReserved, 0xffff)),
              SMBD_E_OK);
}

// --- Client side: checks against our request and the combination -----------

TEST(NegotiateClient, RejectsPreferredSendSizeAboveOurReceiveSize)
{
    smbd_negotiate_resp resp;
    ASSERT_EQ(ParseResp(Copy(kSuccessResp), &resp), SMBD_E_OK);
    smbd_conn_params conn;
    resp.preferred_send_size = kCifsLocal.max_receive_size + 1;
    EXPECT_EQ(smbd_negotiate_client_params(&kCifsLocal, &resp, &conn),
              SMBD_E_SEND_SIZE_TOO_LARGE);
    resp.preferred_send_size = kCifsLocal.max_receive_size;
    EXPECT_EQ(smbd_negotiate_client_params(&kCifsLocal, &resp, &conn),
              SMBD_E_OK);
}

TEST(NegotiateClient, CombinesResponseWithOwnParams)
{
    smbd_local_params local = kCifsLocal;
    local.max_send_size = 16384; // larger than the server's receive size
    local.receive_credit_max = 64;
    local.send_credit_target = 100;
    smbd_negotiate_resp resp;
    ASSERT_EQ(ParseResp(Copy(kSuccessResp), &resp), SMBD_E_OK);
    smbd_conn_params conn;
    ASSERT_EQ(smbd_negotiate_client_params(&local, &resp, &conn), SMBD_E_OK);
    EXPECT_EQ(conn.receive_credit_max, 64);
    EXPECT_EQ(conn.receive_credit_target, 64); // min(server's 255, our 64)
    EXPECT_EQ(conn.send_credit_target, 100);
    EXPECT_EQ(conn.max_send_size, 8192u); // min(16384, server receive 8192)
    EXPECT_EQ(conn.max_receive_size, 1364u);
    EXPECT_EQ(conn.max_fragmented_send_size, 1048576u);
    EXPECT_EQ(conn.max_fragmented_recv_size, 1048576u);
    EXPECT_EQ(conn.max_read_write_size, 8388608u); // the server decides it
}

// Full exchange through the wire bytes: whatever the two sides are configured
// with, neither may end up sending more than the other receives, and each
// side's fragmented send limit is the other's reassembly limit.
TEST(NegotiateFlow, BothSidesAgreeOnLimits)
{
    struct Case {
        smbd_local_params client, server;
    };
    const Case cases[] = {
        {kCifsLocal, kCifsLocal},
        {kCifsLocal,
         {.receive_credit_max = 16,
          .send_credit_target = 8,
          .max_send_size = 8192,
          .max_receive_size = 8192,
          .max_fragmented_size = 173910,
          .max_read_write_size = 8388608}},
        {{.receive_credit_max = 10,
          .send_credit_target = 10,
          .max_send_size = 8192,
          .max_receive_size = 128,
          .max_fragmented_size = 131072,
          .max_read_write_size = 65536},
         kCifsLocal},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(&c - cases);
        const smbd_negotiate_req req_in = {
            .min_version = SMBD_VERSION_1,
            .max_version = SMBD_VERSION_1,
            .credits_requested = c.client.send_credit_target,
            .preferred_send_size = c.client.max_send_size,
            .max_receive_size = c.client.max_receive_size,
            .max_fragmented_size = c.client.max_fragmented_size,
        };
        Bytes wire(SMBD_NEGOTIATE_REQ_SIZE);
        smbd_negotiate_req_build(&req_in, wire.data());

        smbd_negotiate_req req;
        ASSERT_EQ(ParseReq(wire, &req), SMBD_E_OK);
        smbd_conn_params server;
        smbd_negotiate_server_params(&c.server, &req, &server);
        smbd_negotiate_resp resp_out;
        smbd_negotiate_resp_success(&server, 7, &resp_out);
        wire.assign(SMBD_NEGOTIATE_RESP_SIZE, 0);
        smbd_negotiate_resp_build(&resp_out, wire.data());

        smbd_negotiate_resp resp;
        ASSERT_EQ(ParseResp(wire, &resp), SMBD_E_OK);
        EXPECT_EQ(resp.credits_granted, 7);
        smbd_conn_params client;
        ASSERT_EQ(smbd_negotiate_client_params(&c.client, &resp, &client),
                  SMBD_E_OK);

        EXPECT_LE(client.max_send_size, server.max_receive_size);
        EXPECT_LE(server.max_send_size, client.max_receive_size);
        EXPECT_EQ(client.max_fragmented_send_size,
                  server.max_fragmented_recv_size);
        EXPECT_EQ(server.max_fragmented_send_size,
                  client.max_fragmented_recv_size);
        EXPECT_EQ(
            server.receive_credit_target,
            std::min(c.client.send_credit_target, c.server.receive_credit_max));
        EXPECT_EQ(
            client.receive_credit_target,
            std::min(c.server.send_credit_target, c.client.receive_credit_max));
        EXPECT_EQ(client.max_read_write_size, c.server.max_read_write_size);
    }
}

} // namespace
