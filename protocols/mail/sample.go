package mail

// Sample is a small mbox of two messages, the second with a related part
// (Content-ID) in base64: for the tour and the tests.
const Sample = "From alice@example.org Sun Nov 22 10:00:00 2026\n" +
	"From: Alice <alice@example.org>\n" +
	"To: Bob <bob@example.org>\n" +
	"Subject: Lunch\n" +
	"Date: Sun, 22 Nov 2026 10:00:00 +0000\n" +
	"Message-ID: <lunch.1@example.org>\n" +
	"\n" +
	"Noon at the usual place?\n" +
	">From the kitchen: soup.\n" +
	"\n" +
	"From bob@example.org Sun Nov 22 11:00:00 2026\n" +
	"From: Bob <bob@example.org>\n" +
	"To: Alice <alice@example.org>\n" +
	"Subject: Re: Lunch\n" +
	"Date: Sun, 22 Nov 2026 11:00:00 +0000\n" +
	"Message-ID: <reply.2@example.org>\n" +
	"MIME-Version: 1.0\n" +
	"Content-Type: multipart/related; boundary=\"b1\"\n" +
	"\n" +
	"--b1\n" +
	"Content-Type: text/plain; charset=us-ascii\n" +
	"\n" +
	"Yes. Map attached.\n" +
	"--b1\n" +
	"Content-Type: text/plain; name=\"map.txt\"\n" +
	"Content-ID: <map@example.org>\n" +
	"Content-Transfer-Encoding: base64\n" +
	"\n" +
	"VGhlIHVzdWFsIHBsYWNlIGlzIG9uIHRo\n" +
	"ZSBjb3JuZXIuCg==\n" +
	"--b1--\n"
