// The network fuzzer's mutators: pure edits of the bytes a conversation
// sends, each drawn from a FuzzRng, so that the same seed and index make
// the same bytes; and the READ/WRITE requests with their edits applied.
// The planners (fuzz_plan.h) pick which of these to apply.
#ifndef SMBD_CLIENT_FUZZ_MUTATE_H
#define SMBD_CLIENT_FUZZ_MUTATE_H

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "hex.h"
#include "smb2.h"

namespace smbd::client {

// SplitMix64: tiny, and the same stream on every platform and build.
class FuzzRng {
  public:
    FuzzRng(uint64_t seed, uint64_t conversation);
    uint64_t next();
    // [0, n) for n >= 1
    uint32_t below(uint32_t n);
    // [lo, hi]
    uint32_t between(uint32_t lo, uint32_t hi);
    // true in @p of 100 draws
    bool percent(uint32_t p) { return below(100) < p; }
    template <class T> T pick(std::initializer_list<T> values)
    {
        return *(values.begin() + below(uint32_t(values.size())));
    }
    void fill(std::span<uint8_t> out);

  private:
    uint64_t state_;
};

// One change to a READ/WRITE request over RDMA. Descriptor edits apply to
// entry index % count; field edits overwrite the request's field.
struct RwEdit {
    enum class Kind {
        token_xor,
        token_set,
        offset_add,
        offset_set,
        length_set,
        length_add,
        duplicate,
        drop,
        repeat, // the list: copy, remove, grow to value entries
        info_offset,
        info_length,
        channel,     // ChannelInfoOffset/Length, Channel
        amount,      // READ Length, WRITE RemainingBytes
        inline_data, // READ MinimumCount, WRITE Length
    };
    Kind kind;
    uint32_t index = 0;
    uint64_t value = 0;
};

struct RwRequestPlan {
    bool write = false;
    uint64_t offset = 0; // in the file
    uint32_t size = 0;
    std::vector<RwEdit> edits;
};

// An edit of a Buffer Descriptor V1 entry, not of a request field.
bool is_descriptor_edit(RwEdit::Kind k);

// The SMB2 READ or WRITE of @r with @descs (as RdmaIo::describe gives
// them) and the plan's edits applied.
std::vector<uint8_t> build_rw_request(const RwRequestPlan &r, uint32_t channel,
                                      std::span<const uint8_t> descs,
                                      uint64_t message_id, uint64_t session_id);

namespace fuzz {

// A field of a request body, from the start of the PDU.
constexpr size_t in_body(size_t field) { return SMB2_HDR_SIZE + field; }

// "0x1f" in the notes of a mutation
using smbd::hex;

// The mutations of one message, in words.
struct Notes {
    std::string text;
    void add(const std::string &s) { text += (text.empty() ? "" : ", ") + s; }
};

// Field writers and readers that leave a field past the end alone (a
// reader sees 0): a truncated message has no such field.
void put16(std::vector<uint8_t> &b, size_t at, uint16_t v);
void put32(std::vector<uint8_t> &b, size_t at, uint32_t v);
void put64(std::vector<uint8_t> &b, size_t at, uint64_t v);
// @v over the bytes at @at, as far as @b reaches.
void put_bytes(std::vector<uint8_t> &b, size_t at, std::span<const uint8_t> v);
uint16_t get16(std::span<const uint8_t> b, size_t at);
uint32_t get32(std::span<const uint8_t> b, size_t at);

// A 16-bit value at the edges, or a random one.
uint16_t any16(FuzzRng &rng);
// Sizes at the edges: 0, the 128-byte minimum, around @near, the top.
uint32_t any_size(FuzzRng &rng, uint32_t near);
// Flip @n random bits in bytes [@from, @to) of @b.
void flip_bits(FuzzRng &rng, std::vector<uint8_t> &b, uint32_t n,
               size_t from = 0, size_t to = SIZE_MAX);
// A mutation may write the value that was there: then one bit more (from
// byte @from on), or a byte more.
void make_differ(FuzzRng &rng, std::vector<uint8_t> &b,
                 std::span<const uint8_t> valid, size_t from = 0);
std::vector<uint8_t> random_bytes(FuzzRng &rng, uint32_t n);
// Cut PDU @b to a random shorter length (a PDU has at least one byte), or
// add 1 to @max_extra random bytes behind it (1 when @max_extra is 0). A
// PDU of 0 or 1 bytes has no shorter length: cutting leaves it as it is.
void change_length(FuzzRng &rng, std::vector<uint8_t> &b, bool longer,
                   uint32_t max_extra, Notes &notes);
// One SMB2 header field a server must check or copy.
void mutate_smb2_header(FuzzRng &rng, std::vector<uint8_t> &b, Notes &notes);

} // namespace fuzz

} // namespace smbd::client

#endif // SMBD_CLIENT_FUZZ_MUTATE_H
