import Testing
import AppKernelAuth
import AppKernelCore

/// Published test vectors: RFC 7636 appendix B (PKCE S256). SHA-256, HMAC and PBKDF2 are
/// AppKernelCore's (libcrypto); their vectors are in AppKernelCoreTests' DigestVectorTests.
struct CryptoTests {
    @Test func pkceChallengeMatchesRFC7636AppendixB() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        #expect(Base64URL.encode(SHA256.hash(Array(verifier.utf8))) == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        let octets: [UInt8] = [116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186, 22, 212, 37, 77,
                               105, 214, 191, 240, 91, 88, 5, 88, 83, 132, 141, 121]
        #expect(Base64URL.encode(octets) == verifier)
        #expect(Base64URL.decode(verifier) == octets)
        #expect(Base64URL.decode("not base64!") == nil)
    }

    @Test func randomTokensDiffer() {
        #expect(SecureRandom.token().count == 43)
        #expect(SecureRandom.token() != SecureRandom.token())
    }
}
