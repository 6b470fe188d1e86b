// payloads.js prints one JSON line per record of the WARC files named on
// the command line, as warcio.js (the field's reader) parses them: the
// record's type, target URI, protocol, ID, the record it refers to, the SHA-256 and length of its
// payload, and its offset in the file from warcio's own index.
const { WARCParser } = require("warcio");
const crypto = require("crypto");
const fs = require("fs");

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
        length: payload.length,
      }));
    }
  }
})().catch((e) => { console.error(e); process.exit(1); });
