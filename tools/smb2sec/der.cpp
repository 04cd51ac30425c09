#include "der.h"

#include <string>

namespace smbd::smb2sec::der {

namespace {

Error err(std::string m) { return make_error(Errc::der, std::move(m)); }

} // namespace

Result<Tlv> Reader::next()
{
    if (rest_.size() < 2)
        return err("element header truncated");
    uint8_t tag = rest_[0];
    if ((tag & 0x1f) == 0x1f)
        return err("multi-byte tag");
    size_t len = rest_[1];
    size_t at = 2;
    if (len & 0x80) {
        size_t n = len & 0x7f;
        if (n == 0)
            return err("indefinite length");
        if (n > 4)
            return err(std::to_string(n) + "-byte length");
        if (rest_.size() - at < n)
            return err("length truncated");
        len = 0;
        for (size_t i = 0; i < n; i++)
            len = len << 8 | rest_[at++];
    }
    if (len > rest_.size() - at)
        return err("element of " + std::to_string(len) + " bytes, " +
                   std::to_string(rest_.size() - at) + " left");
    Tlv t{tag, rest_.subspan(at, len)};
    rest_ = rest_.subspan(at + len);
    return t;
}

Result<ByteView> Reader::expect(uint8_t tag, const char *what)
{
    auto t = next();
    if (!t)
        return make_error(Errc::der,
                          std::string(what) + ": " + t.error().message);
    if (t->tag != tag)
        return make_error(Errc::spnego, std::string(what) + ": tag " +
                                            std::to_string(t->tag) + ", " +
                                            std::to_string(tag) + " expected");
    return t->content;
}

std::vector<uint8_t> tlv(uint8_t tag, ByteView content)
{
    std::vector<uint8_t> out{tag};
    size_t n = content.size();
    if (n < 0x80) {
        out.push_back(uint8_t(n));
    }
    else {
        int bytes = n > 0xffffff ? 4 : n > 0xffff ? 3 : n > 0xff ? 2 : 1;
        out.push_back(uint8_t(0x80 | bytes));
        for (int i = bytes - 1; i >= 0; i--)
            out.push_back(uint8_t(n >> (8 * i)));
    }
    out.insert(out.end(), content.begin(), content.end());
    return out;
}

} // namespace smbd::smb2sec::der
