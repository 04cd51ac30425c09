#include "tcp_transport.h"

#include <cerrno>
#include <cstring>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace smbd::client {

namespace {

using Clock = std::chrono::steady_clock;

// The Direct TCP header: a zero byte, then 24 bits of length.
constexpr size_t kTcpHeader = 4;
constexpr size_t kTcpMaxPdu = 0xFFFFFF;

int remaining_ms(Clock::time_point until)
{
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - Clock::now());
    return left.count() < 0 ? 0 : int(left.count());
}

Error sys_error(Errc e, const std::string &what)
{
    return make_error(e, what + ": " + std::strerror(errno));
}

// Wait until @fd is ready for @events or @until passes.
Status wait_fd(int fd, short events, Clock::time_point until)
{
    for (;;) {
        pollfd p{fd, events, 0};
        int n = ::poll(&p, 1, remaining_ms(until));
        if (n > 0)
            return {};
        if (n == 0)
            return make_error(Errc::timeout,
                              "nothing arrived over TCP in time");
        if (errno != EINTR)
            return sys_error(Errc::unreachable, "poll");
    }
}

} // namespace

Result<std::unique_ptr<TcpTransport>>
TcpTransport::connect(const std::string &addr, uint16_t port,
                      std::chrono::milliseconds timeout)
{
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo *list = nullptr;
    int rc = ::getaddrinfo(addr.c_str(), std::to_string(port).c_str(), &hints,
                           &list);
    if (rc)
        return make_error(Errc::unreachable,
                          "cannot resolve " + addr + ": " + gai_strerror(rc));
    std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> hold(list, freeaddrinfo);
    auto until = Clock::now() + timeout;
    Error last = make_error(Errc::unreachable, "no address for " + addr);
    for (addrinfo *ai = list; ai; ai = ai->ai_next) {
        int fd = ::socket(ai->ai_family,
                          ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            last = sys_error(Errc::unreachable, "socket");
            continue;
        }
        std::unique_ptr<TcpTransport> t(new TcpTransport(fd));
        if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            return t;
        if (errno != EINPROGRESS) {
            last = sys_error(Errc::unreachable,
                             "connect to " + addr + ":" + std::to_string(port));
            continue;
        }
        if (auto st = wait_fd(fd, POLLOUT, until); !st) {
            last = st.error();
            continue;
        }
        int err = 0;
        socklen_t len = sizeof(err);
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (!err)
            return t;
        errno = err;
        last = sys_error(Errc::unreachable,
                         "connect to " + addr + ":" + std::to_string(port));
    }
    return last;
}

std::unique_ptr<TcpTransport> TcpTransport::adopt(int fd)
{
    return std::unique_ptr<TcpTransport>(new TcpTransport(fd));
}

TcpTransport::~TcpTransport() { ::close(fd_); }

Status TcpTransport::send_pdu(std::span<const uint8_t> pdu)
{
    if (pdu.size() > kTcpMaxPdu)
        return make_error(Errc::invalid_argument,
                          "a PDU of " + std::to_string(pdu.size()) +
                              " bytes does not fit the 24-bit TCP length");
    uint8_t hdr[kTcpHeader] = {0, uint8_t(pdu.size() >> 16),
                               uint8_t(pdu.size() >> 8), uint8_t(pdu.size())};
    std::vector<uint8_t> msg(hdr, hdr + kTcpHeader);
    msg.insert(msg.end(), pdu.begin(), pdu.end());
    // a send never waits for the server longer than a minute
    auto until = Clock::now() + std::chrono::minutes(1);
    size_t done = 0;
    while (done < msg.size()) {
        ssize_t n =
            ::send(fd_, msg.data() + done, msg.size() - done, MSG_NOSIGNAL);
        if (n > 0) {
            done += size_t(n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN) {
            if (auto st = wait_fd(fd_, POLLOUT, until); !st)
                return st;
            continue;
        }
        return errno == EPIPE || errno == ECONNRESET
                   ? make_error(Errc::peer_disconnected,
                                "the server closed the TCP connection")
                   : sys_error(Errc::unreachable, "send");
    }
    return {};
}

Status TcpTransport::read_exact(std::span<uint8_t> out, Clock::time_point until)
{
    if (broken_)
        return make_error(Errc::protocol, "a timeout cut a PDU: the TCP "
                                          "stream lost its framing");
    size_t done = 0;
    while (done < out.size()) {
        ssize_t n = ::recv(fd_, out.data() + done, out.size() - done, 0);
        if (n > 0) {
            done += size_t(n);
            continue;
        }
        if (n == 0 || (n < 0 && errno == ECONNRESET))
            return make_error(Errc::peer_disconnected,
                              "the server closed the TCP connection");
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN)
            return sys_error(Errc::unreachable, "recv");
        if (auto st = wait_fd(fd_, POLLIN, until); !st) {
            broken_ = done > 0;
            return st;
        }
    }
    return {};
}

Result<ReceivedPdu> TcpTransport::recv(std::chrono::milliseconds timeout)
{
    auto until = Clock::now() + timeout;
    uint8_t hdr[kTcpHeader];
    if (auto st = read_exact(hdr, until); !st)
        return st.error();
    if (hdr[0] != 0)
        return make_error(Errc::protocol, "TCP message type " +
                                              std::to_string(hdr[0]) +
                                              " where a PDU (0) was expected");
    size_t len = size_t(hdr[1]) << 16 | size_t(hdr[2]) << 8 | hdr[3];
    ReceivedPdu got;
    got.bytes.resize(len);
    // the rest of a PDU follows its header within the same wait
    if (auto st = read_exact(got.bytes, until); !st) {
        broken_ = true;
        return st.error();
    }
    return got;
}

} // namespace smbd::client
