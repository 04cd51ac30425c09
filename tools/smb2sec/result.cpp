#include "result.h"

namespace smbd::smb2sec {

const char *errc_name(Errc e)
{
    switch (e) {
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

} // namespace smbd::smb2sec
