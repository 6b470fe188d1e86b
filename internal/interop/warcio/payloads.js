// payloads.js prints one JSON line per record of the WARC files named on
// the command line, as warcio.js (the field's reader) parses them: the
// record's type, target URI, protocol, ID, the record it refers to, its
// WARC-Payload-Digest and the SHA-1 warcio.js's payload has, the SHA-256 and length of its
// payload, and its offset in the file from warcio's own index.
const { WARCParser } = require("warcio");
const crypto = require("crypto");
const fs = require("fs");

// base32 is RFC 4648's encoding, as WARC digests are written.
function base32(bytes) {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let out = "", bits = 0, value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  while (out.length % 8 !== 0) out += "=";
  return out;
}

(async () => {
  for (const name of process.argv.slice(2)) {
    const parser = new WARCParser(fs.createReadStream(name));
    for await (const record of parser) {
      const payload = await record.readFully();
      console.log(JSON.stringify({
        file: name,
        offset: parser.offset,
        type: record.warcType,
        uri: record.warcTargetURI || "",
        protocol: record.warcHeader("WARC-Protocol") || "",
        concurrentTo: record.warcHeader("WARC-Concurrent-To") || "",
        id: record.warcHeader("WARC-Record-ID") || "",
        refersTo: record.warcHeader("WARC-Refers-To") || "",
        sha256: crypto.createHash("sha256").update(payload).digest("hex"),
        payloadDigest: record.warcHeader("WARC-Payload-Digest") || "",
        sha1: "sha1:" + base32(crypto.createHash("sha1").update(payload).digest()),
        length: payload.length,
      }));
    }
  }
})().catch((e) => { console.error(e); process.exit(1); });
