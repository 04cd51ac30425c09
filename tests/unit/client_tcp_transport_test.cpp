// Direct TCP framing (MS-SMB2 2.1) over a socketpair: a PDU behind its
// 4-byte length, and a timeout inside a PDU ending the stream rather than
// leaving it to read body bytes as the next length.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tcp_transport.h"

using namespace smbd::client;
using namespace std::chrono_literals;

namespace {

struct Pair {
    std::unique_ptr<TcpTransport> t;
    int peer = -1;
    Pair()
    {
        int fds[2];
        EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
        fcntl(fds[0], F_SETFL, O_NONBLOCK);
        t = TcpTransport::adopt(fds[0]);
        peer = fds[1];
    }
    ~Pair() { close(peer); }
    void put(std::vector<uint8_t> b) const
    {
        ASSERT_EQ(write(peer, b.data(), b.size()), ssize_t(b.size()));
    }
};

} // namespace

TEST(TcpTransport, PduBehindItsLength)
{
    Pair p;
    ASSERT_TRUE(p.t->send_pdu(std::vector<uint8_t>{7, 8, 9}).ok());
    uint8_t got[7];
    ASSERT_EQ(read(p.peer, got, sizeof(got)), 7);
    EXPECT_EQ(std::vector<uint8_t>(got, got + 7),
              (std::vector<uint8_t>{0, 0, 0, 3, 7, 8, 9}));
    p.put({0, 0, 0, 2, 0xAA, 0xBB});
    auto r = p.t->recv(1s);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->bytes, (std::vector<uint8_t>{0xAA, 0xBB}));
}

TEST(TcpTransport, TimeoutBeforeAPduLeavesTheStream)
{
    Pair p;
    auto r = p.t->recv(10ms);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, make_error_code(Errc::timeout));
    p.put({0, 0, 0, 1, 0x42});
    auto next = p.t->recv(1s);
    ASSERT_TRUE(next.ok()) << next.error().message;
    EXPECT_EQ(next->bytes, std::vector<uint8_t>{0x42});
}

TEST(TcpTransport, TimeoutInsideAPduEndsTheStream)
{
    Pair p;
    // a 10-byte PDU of which 3 bytes come in time
    p.put({0, 0, 0, 10, 1, 2, 3});
    auto cut = p.t->recv(20ms);
    ASSERT_FALSE(cut.ok());
    EXPECT_EQ(cut.error().code, make_error_code(Errc::timeout));
    // the rest, then a whole PDU: the framing is gone, and the transport
    // says so instead of reading body bytes as a length
    // (its bytes would read as a 1-byte PDU 0x99 when taken for a length)
    p.put({0, 0, 0, 1, 0x99, 9, 10, 0, 0, 0, 1, 0x42});
    auto after = p.t->recv(1s);
    ASSERT_FALSE(after.ok());
    EXPECT_EQ(after.error().code, make_error_code(Errc::protocol));
}
