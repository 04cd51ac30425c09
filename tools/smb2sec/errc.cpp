#include "errc.h"

namespace smbd::smb2sec {

namespace {

class Category : public std::error_category {
  public:
    const char *name() const noexcept override { return "smb2sec"; }
    std::string message(int ev) const override
    {
        switch (static_cast<Errc>(ev)) {
        case Errc::invalid_argument:
            return "invalid_argument";
        case Errc::truncated:
            return "truncated";
        case Errc::signature:
            return "signature";
        case Errc::message_type:
            return "message_type";
        case Errc::field_range:
            return "field_range";
        case Errc::av_pairs:
            return "av_pairs";
        case Errc::flags:
            return "flags";
        case Errc::der:
            return "der";
        case Errc::spnego:
            return "spnego";
        case Errc::mic:
            return "mic";
        case Errc::pdu_signature:
            return "pdu_signature";
        }
        return "unknown";
    }
};

} // namespace

const std::error_category &smb2sec_category()
{
    static const Category category;
    return category;
}

std::error_code make_error_code(Errc e)
{
    return {static_cast<int>(e), smb2sec_category()};
}

} // namespace smbd::smb2sec
