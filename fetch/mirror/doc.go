// Package mirror keeps a local copy of a remote tree up to date: an FTP
// directory, a Gopher menu, an HTTP index page, a file: directory or a
// newsgroup.
//
//	rep, err := mirror.Run(ctx, fetch.NewClient(), "ftp://ftp.example.org/pub/", "pub", mirror.Options{OnlyNewer: true})
//
// Run lists each directory once, decides per file whether it is new,
// changed or unchanged, and transfers what needs it with several
// transfers at once. Every file is written to NAME.part beside its final
// name and renamed once complete, so an interrupted run never leaves an
// incomplete file under a final name; the next run resumes the .part
// files (FTP REST, HTTP Range) instead of starting over.
//
// Remote names are not trusted. A name becomes a local path only when it
// is one local path element (no "/", "\", "..", NUL, not absolute); every
// write goes through an os.Root opened on the destination (a folder is
// opened through it, and its files are created, timed and renamed by
// their single names relative to the folder, never following a symbolic
// link at the name), so nothing can be written outside it, whatever the
// server lists or the destination holds. Remote symbolic links are never
// created locally. Names that differ only in case are reported, not
// overwritten, where the local file system folds case. What is refused is reported in the Report, not
// silently dropped.
//
// Which files are new or changed:
//
//   - FTP and file: by the listing's size and modification time (MLSD is
//     exact; a Unix LIST line gives minutes or days, and the comparison
//     uses that precision).
//   - HTTP: a conditional GET with If-Modified-Since the local copy's time.
//   - Gopher: Gopher+ Mod-Date where the server gives attributes; plain
//     Gopher gives neither size nor time, so items are fetched again.
//   - News: articles do not change; one that is there is kept.
//
// The command's use of the mirror, flag by flag: deref help mirror
// (cmd/deref/help/mirror.md).
package mirror
