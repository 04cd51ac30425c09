#include "error.h"

namespace smbd::client {

namespace {

class Category : public std::error_category {
  public:
    const char *name() const noexcept override { return "smbd-client"; }
    std::string message(int ev) const override
    {
        switch (static_cast<Errc>(ev)) {
        case Errc::invalid_argument:
            return "invalid argument";
        case Errc::rdma:
            return "RDMA call failed";
        case Errc::unreachable:
            return "server unreachable";
        case Errc::timeout:
            return "timed out";
        case Errc::peer_disconnected:
            return "server disconnected";
        case Errc::negotiate_rejected:
            return "SMB Direct negotiate rejected";
        case Errc::protocol:
            return "server broke the protocol";
        case Errc::smb2_status:
            return "SMB2 error status";
        case Errc::mismatch:
            return "echoed PDU differs";
        case Errc::closed:
            return "closed by the client";
        }
        return "unknown error";
    }
};

} // namespace

const std::error_category &client_category()
{
    static const Category category;
    return category;
}

std::error_code make_error_code(Errc e)
{
    return {static_cast<int>(e), client_category()};
}

} // namespace smbd::client
