// SMB 3.x keys (MS-SMB2 3.1.4.2, 3.2.5.3.1) and the 3.1.1 preauth
// integrity hash (3.2.5.2, 3.2.5.3.1) from the session key NTLMSSP exports.
#ifndef SMBD_SMB2SEC_KEYS_H
#define SMBD_SMB2SEC_KEYS_H

#include <cstdint>

#include "crypto.h"

namespace smbd::smb2sec {

// SP800-108 counter mode, HMAC-SHA256, one round, L = 128. @label and
// @context as MS-SMB2 gives them, terminating NUL included.
Bytes16 kdf(ByteView key, ByteView label, ByteView context);

// The client's keys: encryption for what it sends, decryption for what it
// receives. 2.x signs with the session key and has no cipher keys.
//
// The cipher keys are 128-bit, for AES-128-CCM and AES-128-GCM only:
// AES-256-CCM and AES-256-GCM take 256-bit keys (L = 256 in the KDF, and
// the full session key of Kerberos), which this library does not derive.
// The session layer must refuse a session that has to be encrypted
// (SMB2_SESSION_FLAG_ENCRYPT_DATA, or a share that requires it) when its
// connection negotiated an AES-256 cipher, rather than use these keys.
struct SessionKeys {
    Bytes16 signing{};
    Bytes16 application{};
    Bytes16 encryption{};
    Bytes16 decryption{};
};

// @preauth_hash: the session's hash after its last SESSION_SETUP request
// (3.1.1 only). The connection's cipher is not an argument: the cipher
// keys are AES-128 ones whatever it is (see SessionKeys).
SessionKeys derive_keys(uint16_t dialect, const Bytes16 &session_key,
                        const Bytes64 &preauth_hash);

// SHA-512 over the previous value and each message as on the wire: the
// connection's over NEGOTIATE request and response, then a session's copy
// of it over each SESSION_SETUP request and each response but the final
// STATUS_SUCCESS one.
class PreauthHash {
  public:
    void add(ByteView message) { value_ = sha512({value_, message}); }
    const Bytes64 &value() const { return value_; }

  private:
    Bytes64 value_{};
};

} // namespace smbd::smb2sec

#endif // SMBD_SMB2SEC_KEYS_H
