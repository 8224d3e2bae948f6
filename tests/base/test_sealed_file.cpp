// The checksummed envelope: round trip, and every kind of damage refused with its name.
#include "support/catch.h"

#include "nmt/base/error.h"
#include "nmt/base/sealed_file.h"

using namespace nmt;

TEST_CASE("sealed payloads come back unchanged", "[sealed]") {
  for (const std::string payload : {std::string(), std::string("PK\x03\x04 zip bytes"), std::string(100000, '\0')}) {
    const auto sealed = seal("checkpoint", payload);
    const auto opened = unseal(sealed, "checkpoint", "m.pt");
    CHECK(opened.sealed);
    CHECK(opened.payload == payload);
  }
  CHECK(crc32_of("123456789") == 0xcbf43926u);  // the standard CRC-32 check value
}

TEST_CASE("unsealed bytes pass through as old files", "[sealed]") {
  const std::string old = "PK\x03\x04 an archive from before seals";
  const auto opened = unseal(old, "checkpoint", "old.pt");
  CHECK(!opened.sealed);
  CHECK(opened.payload == old);
}

TEST_CASE("damage is refused with a clear message", "[sealed]") {
  const auto sealed = seal("checkpoint", std::string(1000, 'w'));
  auto flipped = sealed;
  flipped[flipped.size() - 10] ^= 0x10;
  CHECK_THROWS_WITH(unseal(flipped, "checkpoint", "m.pt"), "m.pt is corrupted (checksum mismatch)");
  CHECK_THROWS_WITH(unseal(sealed.substr(0, sealed.size() - 1), "checkpoint", "m.pt"),
                    HasSubstring("m.pt is truncated (999 of 1000 payload bytes)"));
  CHECK_THROWS_WITH(unseal(sealed + "x", "checkpoint", "m.pt"), HasSubstring("1 bytes after the payload"));
  CHECK_THROWS_WITH(unseal(sealed, "vocabulary", "m.pt"), HasSubstring("not a sealed vocabulary"));
  CHECK_THROWS_WITH(unseal("NMT-SEALED 1 checkpoint\ncrc32 zz\nbytes 1\n\nx", "checkpoint", "m.pt"),
                    HasSubstring("crc32 is not 8 hex digits"));
  CHECK_THROWS_WITH(unseal("NMT-SEALED 1 checkpoint\ncrc32 00000000\nbytes -1\n\nx", "checkpoint", "m.pt"),
                    HasSubstring("bytes is not a number"));
  CHECK_THROWS_WITH(unseal("NMT-SEALED 1 checkpoint\ncrc32 00000000\n", "checkpoint", "m.pt"),
                    HasSubstring("bad header"));
  // A flipped bit in the header is caught too.
  auto header = sealed;
  header[header.find("bytes ") + 6] = '9';
  CHECK_THROWS_AS(unseal(header, "checkpoint", "m.pt"), Error);
}
