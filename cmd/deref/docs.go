package main

//go:generate go test -run TestManPage -update

import (
	"embed"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strings"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/internal/version"
)

// printVersion writes deref's version, the commit it was built from, and
// the schemes it speaks.
func printVersion(w io.Writer) {
	v := "deref " + version.Version()
	if c := version.Commit(); c != "" {
		v += " (commit " + c + ")"
	}
	fmt.Fprintf(w, "%s %s %s/%s\n", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	schemes := fetch.NewClient().Schemes()
	sort.Strings(schemes)
	fmt.Fprintf(w, "schemes: %s\n", strings.Join(schemes, " "))
}

// runCompletion prints the completion script of a shell.
func runCompletion(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		return usageError(stderr, "completion takes one shell: bash, zsh or fish")
	}
	switch args[0] {
	case "bash":
		io.WriteString(stdout, bashCompletion())
	case "zsh":
		io.WriteString(stdout, zshCompletion())
	case "fish":
		io.WriteString(stdout, fishCompletion())
	default:
		return usageError(stderr, fmt.Sprintf("completion: %q is not bash, zsh or fish", args[0]))
	}
	return 0
}

// helpFiles are the longer topics of deref help, one Markdown file each,
// its first line its title.
//
//go:embed help/*.md
var helpFiles embed.FS

// helpTopic is one topic of deref help.
type helpTopic struct{ name, title, text string }

// helpTopics lists the topics of deref help, by name.
func helpTopics() []helpTopic {
	entries, _ := helpFiles.ReadDir("help")
	var out []helpTopic
	for _, e := range entries {
		b, _ := helpFiles.ReadFile("help/" + e.Name())
		first, _, _ := strings.Cut(string(b), "\n")
		out = append(out, helpTopic{name: strings.TrimSuffix(e.Name(), ".md"), title: strings.TrimPrefix(first, "# "), text: string(b)})
	}
	return out
}

// runHelp prints a topic, or with none the list of them.
func runHelp(args []string, stdout, stderr io.Writer) int {
	topics := helpTopics()
	if len(args) == 0 {
		fmt.Fprintln(stdout, "deref help TOPIC prints one of these (deref -h and man deref give every flag):")
		for _, t := range topics {
			fmt.Fprintf(stdout, "  %-12s %s\n", t.name, t.title)
		}
		return 0
	}
	if len(args) > 1 {
		return usageError(stderr, "help takes one topic")
	}
	var names []string
	for _, t := range topics {
		if t.name == args[0] {
			io.WriteString(stdout, t.text)
			return 0
		}
		names = append(names, t.name)
	}
	return usageError(stderr, fmt.Sprintf("help: no topic %q (topics: %s)", args[0], strings.Join(names, ", ")))
}

// completedFlags are the flags of cmd the completions offer: those of
// -h's groups, then those also taken.
func completedFlags(cmd command) []flagDef {
	return append(visibleFlags(cmd), alsoTaken(cmd)...)
}

// spellings lists a command's flags as a shell completes them.
func spellings(cmd command) []string {
	var out []string
	for _, f := range completedFlags(cmd) {
		if f.short != "" {
			out = append(out, "-"+f.short)
		}
		out = append(out, "--"+f.long)
	}
	return out
}

// valueCompletion returns the flags of cmd that take a value, grouped by
// what completes it: "file", "dir", a list of choices, or "" (nothing).
func valueCompletion(cmd command) map[string][]string {
	out := map[string][]string{}
	for _, f := range completedFlags(cmd) {
		if f.arg == "" {
			continue
		}
		kind := f.complete
		if kind == "url" {
			kind = ""
		}
		if f.short != "" {
			out[kind] = append(out[kind], "-"+f.short)
		}
		out[kind] = append(out[kind], "--"+f.long)
	}
	return out
}

func bashCompletion() string {
	var b strings.Builder
	b.WriteString("# bash completion for deref; load with: source <(deref completion bash)\n")
	b.WriteString("_deref() {\n")
	b.WriteString("  local cur prev words cword\n")
	b.WriteString("  cur=${COMP_WORDS[COMP_CWORD]}\n  prev=${COMP_WORDS[COMP_CWORD-1]}\n")
	b.WriteString("  local cmd=get\n  [[ ${COMP_WORDS[1]} == mirror ]] && cmd=mirror\n  [[ ${COMP_WORDS[1]} == crawl ]] && cmd=crawl\n  [[ ${COMP_WORDS[1]} == serve ]] && cmd=serve\n")
	b.WriteString("  if [[ $COMP_CWORD == 1 && $cur != -* ]]; then\n    COMPREPLY=($(compgen -W 'mirror crawl serve index help completion' -- \"$cur\"))\n    return\n  fi\n")
	b.WriteString("  if [[ ${COMP_WORDS[1]} == completion ]]; then\n    COMPREPLY=($(compgen -W 'bash zsh fish' -- \"$cur\"))\n    return\n  fi\n")
	for _, c := range []struct {
		name string
		cmd  command
	}{{"get", cmdGet}, {"mirror", cmdMirror}, {"crawl", cmdCrawl}, {"serve", cmdServe}} {
		fmt.Fprintf(&b, "  if [[ $cmd == %s ]]; then\n    case $prev in\n", c.name)
		vc := valueCompletion(c.cmd)
		kinds := make([]string, 0, len(vc))
		for k := range vc {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		for _, k := range kinds {
			action := "return"
			switch k {
			case "file":
				action = "COMPREPLY=($(compgen -f -- \"$cur\")); return"
			case "dir":
				action = "COMPREPLY=($(compgen -d -- \"$cur\")); return"
			case "":
			default:
				action = fmt.Sprintf("COMPREPLY=($(compgen -W '%s' -- \"$cur\")); return", k)
			}
			fmt.Fprintf(&b, "      %s) %s ;;\n", strings.Join(vc[k], "|"), action)
		}
		b.WriteString("    esac\n")
		fmt.Fprintf(&b, "    if [[ $cur == -* ]]; then\n      COMPREPLY=($(compgen -W '%s' -- \"$cur\"))\n      return\n    fi\n  fi\n", strings.Join(spellings(c.cmd), " "))
	}
	b.WriteString("  COMPREPLY=($(compgen -f -- \"$cur\"))\n}\ncomplete -F _deref deref\n")
	return b.String()
}

func zshCompletion() string {
	var b strings.Builder
	b.WriteString("#compdef deref\n# zsh completion for deref; put in a folder of $fpath as _deref, or: source <(deref completion zsh)\n")
	for _, c := range []struct {
		name string
		cmd  command
	}{{"get", cmdGet}, {"mirror", cmdMirror}, {"crawl", cmdCrawl}, {"serve", cmdServe}} {
		fmt.Fprintf(&b, "_deref_%s() {\n  _arguments -s \\\n", c.name)
		for _, f := range completedFlags(c.cmd) {
			help := strings.NewReplacer("'", "'\\''", "[", "\\[", "]", "\\]", ":", "\\:").Replace(f.help)
			value := ""
			if f.arg != "" {
				action := " "
				switch f.complete {
				case "file":
					action = "_files"
				case "dir":
					action = "_files -/"
				case "url", "":
					action = "_urls"
					if f.complete == "" {
						action = " "
					}
				default:
					action = "(" + f.complete + ")"
				}
				value = ":" + strings.ReplaceAll(f.arg, ":", "\\:") + ":" + action
			}
			if f.short != "" {
				fmt.Fprintf(&b, "    '(-%s --%s)'{-%s,--%s}'[%s]%s' \\\n", f.short, f.long, f.short, f.long, help, value)
			} else {
				fmt.Fprintf(&b, "    '--%s[%s]%s' \\\n", f.long, help, value)
			}
		}
		switch c.cmd {
		case cmdMirror:
			b.WriteString("    ':URL:_urls' ':DIR:_files -/'\n}\n")
		case cmdServe:
			b.WriteString("\n}\n")
		default:
			b.WriteString("    '*:URL:_urls'\n}\n")
		}
	}
	b.WriteString("_deref() {\n  if (( CURRENT == 2 )) && [[ $words[2] != -* ]]; then\n    _alternative 'commands:command:(mirror crawl serve index help completion)' 'urls:URL:_urls'\n    return\n  fi\n")
	b.WriteString("  case $words[2] in\n    mirror) shift words; (( CURRENT-- )); _deref_mirror ;;\n    crawl) shift words; (( CURRENT-- )); _deref_crawl ;;\n    serve) shift words; (( CURRENT-- )); _deref_serve ;;\n    completion) _values shell bash zsh fish ;;\n    *) _deref_get ;;\n  esac\n}\n")
	b.WriteString("compdef _deref deref\n")
	return b.String()
}

func fishCompletion() string {
	var b strings.Builder
	b.WriteString("# fish completion for deref; load with: deref completion fish | source\n")
	b.WriteString("complete -c deref -n '__fish_use_subcommand' -a 'mirror crawl serve index help completion' -f\n")
	b.WriteString("complete -c deref -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish' -f\n")
	for _, c := range []struct {
		cond string
		cmd  command
	}{{"not __fish_seen_subcommand_from mirror crawl serve index help completion", cmdGet}, {"__fish_seen_subcommand_from mirror", cmdMirror}, {"__fish_seen_subcommand_from crawl", cmdCrawl}, {"__fish_seen_subcommand_from serve", cmdServe}} {
		for _, f := range completedFlags(c.cmd) {
			line := fmt.Sprintf("complete -c deref -n '%s' -l %s", c.cond, f.long)
			if f.short != "" {
				line += " -s " + f.short
			}
			if f.arg != "" {
				line += " -r"
				switch f.complete {
				case "file", "dir":
					line += " -F"
				case "", "url":
					line += " -f"
				default:
					line += " -f -a '" + f.complete + "'"
				}
			}
			line += " -d '" + strings.ReplaceAll(f.help, "'", "\\'") + "'"
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// manEsc escapes text for roff.
var manEsc = strings.NewReplacer(`\`, `\e`, "-", `\-`, "'", `\(aq`)

// manText is a line of text for roff: escaped, and never read as a
// request.
func manText(s string) string {
	s = manEsc.Replace(s)
	if strings.HasPrefix(s, ".") {
		s = `\&` + s
	}
	return s
}

// manEntry writes one flag of the manual: its spelling, then its help.
func manEntry(b *strings.Builder, f flagDef) {
	b.WriteString(".TP\n")
	spell := `\fB\-\-` + manEsc.Replace(f.long) + `\fR`
	if f.short != "" {
		spell = `\fB\-` + f.short + `\fR, ` + spell
	}
	if f.arg != "" {
		spell += ` \fI` + manEsc.Replace(f.arg) + `\fR`
	}
	b.WriteString(spell + "\n" + manText(f.help) + "\n")
}

// manPage is cmd/deref/deref.1, made from the flag table (go generate
// rewrites the file; a test keeps it from going stale).
func manPage() string {
	var b strings.Builder
	b.WriteString(".\\\" Made by go generate in cmd/deref from the flag table; do not edit.\n")
	b.WriteString(".TH DEREF 1 \"\" \"deref\" \"User Commands\"\n")
	b.WriteString(".SH NAME\nderef \\- dereference URLs of every scheme: HTTP, FTP, Gopher, news, WAIS, file, telnet\n")
	b.WriteString(".SH SYNOPSIS\n.B deref\n[\\fIflags\\fR] \\fIURL\\fR...\n.br\n.B deref mirror\n[\\fIflags\\fR] \\fIURL\\fR \\fIDIR\\fR\n.br\n.B deref crawl\n[\\fIflags\\fR] \\fIURL\\fR...\n.br\n.B deref serve\n[\\fIflags\\fR]\n.br\n.B deref index\n\\fIWARC\\fR...\n.br\n.B deref wacz\n\\fBcreate\\fR|\\fBvalidate\\fR ...\n.br\n.B deref completion\n\\fBbash\\fR|\\fBzsh\\fR|\\fBfish\\fR\n.br\n.B deref help\n[\\fITOPIC\\fR]\n")
	b.WriteString(".SH DESCRIPTION\n")
	for _, p := range strings.Split(strings.TrimSpace(strings.SplitN(usageText, "\n\n", 2)[1]), "\n\n") {
		b.WriteString(".PP\n" + manText(strings.Join(strings.Fields(p), " ")) + "\n")
	}
	b.WriteString(".PP\n.B deref mirror\n" + manText(strings.Join(strings.Fields(strings.SplitN(mirrorUsage, "\n\n", 2)[1]), " ")) + "\n")
	b.WriteString(".PP\n.B deref crawl\n" + manText(strings.Join(strings.Fields(strings.SplitN(crawlUsage, "\n\n", 2)[1]), " ")) + "\n")
	b.WriteString(".PP\n.B deref serve\n" + manText(strings.Join(strings.Fields(strings.SplitN(serveUsage, "\n\n", 2)[1]), " ")) + "\n")
	b.WriteString(".PP\n.B deref index\n" + manText(strings.Join(strings.Fields(strings.SplitN(indexUsage, "\n\n", 2)[1]), " ")) + "\n")
	b.WriteString(".PP\n.B deref wacz\n" + manText(strings.Join(strings.Fields(strings.SplitN(waczUsage, "\n\n", 2)[1]), " ")) + "\n")
	// Each entry is written once: a flag a later section shares with an
	// earlier one, saying the same, is named there as taken "as above".
	written := map[string]bool{}
	section := func(title string, cmd command, groups []string) {
		fmt.Fprintf(&b, ".SH %s\n", title)
		var same []string
		for _, g := range groups {
			first := true
			for _, f := range flagTable {
				if f.cmds&cmd == 0 || f.group != g || f.hidden || cmd == cmdGet && (f.cmds == cmdMirror || f.cmds == cmdCrawl || f.cmds == cmdServe) {
					continue
				}
				var e strings.Builder
				manEntry(&e, asShown(cmd, f))
				if written[e.String()] {
					same = append(same, `\fB\-\-`+manEsc.Replace(f.long)+`\fR`)
					continue
				}
				written[e.String()] = true
				if first {
					fmt.Fprintf(&b, ".SS %s\n", g)
					first = false
				}
				b.WriteString(e.String())
			}
		}
		if len(same) > 0 {
			fmt.Fprintf(&b, ".PP\nAlso, as above: %s.\n", strings.Join(same, ", "))
		}
	}
	section("OPTIONS", cmdGet, flagGroups)
	section("MIRROR OPTIONS", cmdMirror, []string{"Output", "Mirror"})
	b.WriteString(".PP\n.B deref mirror\nalso takes the Connection, HTTP, FTP and News flags above.\n")
	section("CRAWL OPTIONS", cmdCrawl, []string{"Output", "Crawl"})
	b.WriteString(".PP\n.B deref crawl\nalso takes the Connection, HTTP, FTP and News flags above.\n")
	section("SERVE OPTIONS", cmdServe, []string{"Serve"})
	b.WriteString(".SH ALSO TAKEN\nFlags taken for the sake of curl's, wget's and lftp's users: their spellings of deref's flags, and their habits, each saying what it does in deref.\n")
	shown := map[string]bool{}
	for _, c := range []struct {
		name string
		cmd  command
	}{{"", cmdGet}, {"mirror", cmdMirror}, {"crawl", cmdCrawl}, {"serve", cmdServe}} {
		first := true
		for _, f := range alsoTaken(c.cmd) {
			if shown[f.long+"\x00"+f.help] {
				continue // said under an earlier command
			}
			shown[f.long+"\x00"+f.help] = true
			if first && c.name != "" {
				fmt.Fprintf(&b, ".SS deref %s\n", c.name)
			}
			first = false
			manEntry(&b, f)
		}
	}
	b.WriteString(".PP\n.B deref serve\nalso takes \\fB\\-v\\fR, \\fB\\-m\\fR (the wait for an answer to begin), the connection timeouts, \\fB\\-k\\fR, \\fB\\-\\-allow\\-port\\fR, \\fB\\-A\\fR and the FTP and News flags above.\n")
	b.WriteString(".SH TOPICS\nThe longer topics, each printed by \\fBderef help\\fR \\fITOPIC\\fR:\n")
	for _, t := range helpTopics() {
		fmt.Fprintf(&b, ".TP\n.B %s\n%s\n", t.name, manText(t.title))
	}
	b.WriteString(".SH EXIT STATUS\n")
	for _, l := range strings.Split(strings.TrimSpace(exitText), "\n")[1:] {
		code, meaning, _ := strings.Cut(strings.TrimSpace(l), " ")
		fmt.Fprintf(&b, ".TP\n.B %s\n%s\n", code, manText(strings.TrimSpace(meaning)))
	}
	b.WriteString(".SH FILES\n.TP\n.I $XDG_CONFIG_HOME/deref/config\\fR, else \\fI~/.config/deref/config\n")
	b.WriteString("Long flags, one a line, without or with their dashes, the value after spaces or =, quoted or not; # starts a comment. Read first, unless \\fB\\-q\\fR is the first flag; \\fB\\-K\\fR \\fIFILE\\fR adds another; the command line wins.\n")
	b.WriteString(".TP\n.I ~/.netrc\nCredentials for hosts, unless \\fB\\-\\-no\\-netrc\\fR (or \\fB$NETRC\\fR names another file).\n")
	b.WriteString(".SH ENVIRONMENT\n.TP\n.B GOMAXPROCS\nHow many processors run deref at once. Unset, \\fBderef\\fR with more than one URL and \\fBderef mirror\\fR run on one, as curl and wget do (their transfers wait on the network and the disk), unless \\fB\\-\\-segments\\fR reads several streams; one URL, \\fBcrawl\\fR and \\fBserve\\fR use every one.\n")
	b.WriteString(".TP\n.B GOMEMLIMIT\nThe soft memory limit, 96 MiB unless set.\n")
	b.WriteString(".SH SEE ALSO\n.BR curl (1),\n.BR wget (1),\n.BR lftp (1)\n")
	return b.String()
}
