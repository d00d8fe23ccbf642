// More than WebCrypto's 65,536 bytes in one call, uncaught.
// expect: invalid
// error: QuotaExceededError
crypto.getRandomValues(new Uint8Array(65537));
