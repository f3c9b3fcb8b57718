package readme

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The README runner: every ```sh block of README.md runs, in order, on a
// fresh embedded cluster, command by command (a line ending in a backslash
// continues the command; comment lines are skipped). A block that cannot
// run in a test (a long-running server, a benchmark, make itself) is
// preceded by a visible marker with its reason:
//
//	<!-- readme-runner: skip (starts a server that runs until stopped) -->
//
// Any other readme-runner comment is an error, so a typo cannot skip a
// block silently.

// skipMarker matches a skip marker; group 1 is the reason.
var skipMarker = regexp.MustCompile(`^<!-- readme-runner: skip \((.+)\) -->$`)

// block is one ```sh block of the README.
type block struct {
	line     int    // line of the opening fence, 1-based
	section  string // the heading above it
	commands []command
	skip     string // the skip marker's reason, "" when it runs
}

// command is one shell command of a block.
type command struct {
	line int
	text string
}

// parseBlocks reads the README's sh blocks and their markers.
func parseBlocks(readme []byte) ([]block, error) {
	var blocks []block
	var cur *block
	var pending string // a skip reason waiting for its block
	var cont strings.Builder
	contLine := 0
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(readme))
	for n := 1; sc.Scan(); n++ {
		raw := sc.Text()
		line := strings.TrimSpace(raw)
		if cur == nil {
			switch {
			case strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "#!"):
				section = line
			case strings.HasPrefix(line, "<!--") && strings.Contains(line, "readme-runner"):
				m := skipMarker.FindStringSubmatch(line)
				if m == nil {
					return nil, fmt.Errorf("README.md:%d: unknown readme-runner marker %q (the only one is <!-- readme-runner: skip (reason) -->)", n, line)
				}
				pending = m[1]
			case line == "```sh":
				cur = &block{line: n, section: section, skip: pending}
				pending = ""
			case strings.HasPrefix(line, "```"):
				if pending != "" {
					return nil, fmt.Errorf("README.md:%d: a readme-runner skip marker before a block that is not ```sh", n)
				}
			case line != "" && pending != "":
				return nil, fmt.Errorf("README.md:%d: a readme-runner skip marker must come right before its ```sh block", n)
			}
			continue
		}
		if line == "```" {
			if cont.Len() > 0 {
				return nil, fmt.Errorf("README.md:%d: the block ends inside a continued command", n)
			}
			blocks = append(blocks, *cur)
			cur = nil
			continue
		}
		if cont.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if cont.Len() == 0 {
			contLine = n
		}
		if body, ok := strings.CutSuffix(line, `\`); ok {
			cont.WriteString(body + " ")
			continue
		}
		cont.WriteString(line)
		cur.commands = append(cur.commands, command{line: contLine, text: cont.String()})
		cont.Reset()
	}
	if cur != nil {
		return nil, fmt.Errorf("README.md:%d: unclosed ```sh block", cur.line)
	}
	return blocks, sc.Err()
}

func TestParseBlocks(t *testing.T) {
	md := "# T\n\n## A\n\n```sh\npgts a \\\n  --x 1   # note\n# comment\n\npgts b\n```\n\n" +
		"<!-- readme-runner: skip (runs forever) -->\n```sh\npgts serve\n```\n\n```sql\nSELECT 1;\n```\n  ```sh\n  pgts c\n  ```\n"
	blocks, err := parseBlocks([]byte(md))
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 3 || len(blocks[0].commands) != 2 || blocks[0].commands[0].text != "pgts a  --x 1   # note" ||
		blocks[0].commands[1].line != 10 || blocks[0].section != "## A" || blocks[1].skip != "runs forever" || blocks[2].commands[0].text != "pgts c" {
		t.Fatalf("blocks = %+v", blocks)
	}
	for _, bad := range []string{
		"<!-- readme-runner: skp (typo) -->\n```sh\nx\n```\n",
		"<!-- readme-runner: skip (reason) -->\ntext\n```sh\nx\n```\n",
		"```sh\nx \\\n```\n",
		"```sh\nx\n",
	} {
		if _, err := parseBlocks([]byte(bad)); err == nil {
			t.Errorf("parseBlocks(%q) accepted", bad)
		}
	}
}

// TestREADME runs README.md's command blocks in order on a fresh embedded
// cluster with a freshly built pgts.
func TestREADME(t *testing.T) {
	root := repoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := parseBlocks(readme)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) == 0 {
		t.Fatal("README.md has no ```sh blocks")
	}
	// /tmp rather than TMPDIR, opened to the server's user (postgres, as
	// root): pgts changes only directories it creates.
	tmp, err := os.MkdirTemp("/tmp", "pgts-readme-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	if err := os.Chmod(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	bin, work, home := filepath.Join(tmp, "bin"), filepath.Join(tmp, "work"), filepath.Join(tmp, "home")
	for _, d := range []string{bin, work, home} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	build := exec.Command(goTool, "build", "-o", filepath.Join(bin, "pgts"), "./cmd/pgts")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building pgts: %v\n%s", err, out)
	}
	env := []string{"PATH=" + bin + ":/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "LANG=C.UTF-8", "TZ=UTC",
		"PGTS_DATA_DIR=" + filepath.Join(tmp, "data")}
	t.Cleanup(func() {
		cmd := exec.Command(filepath.Join(bin, "pgts"), "db", "destroy", "--yes", "-q")
		cmd.Env, cmd.Dir = env, work
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("destroying the README's cluster: %v\n%s", err, out)
		}
	})
	ran := 0
	for _, b := range blocks {
		if b.skip != "" {
			t.Logf("README.md:%d (%s): skipped: %s", b.line, b.section, b.skip)
			continue
		}
		for _, c := range b.commands {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			cmd := exec.CommandContext(ctx, "/bin/bash", "-c", "set -eo pipefail\n"+c.text)
			cmd.Env, cmd.Dir = env, work
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			start := time.Now()
			err := cmd.Run()
			cancel()
			if err != nil {
				t.Fatalf("README.md:%d, in the block at line %d (%s): command failed: %v\n  $ %s\n%s",
					c.line, b.line, b.section, err, c.text, tail(out.String(), 30))
			}
			t.Logf("README.md:%d: ok in %s: %s", c.line, time.Since(start).Round(time.Millisecond), c.text)
			ran++
		}
	}
	if ran == 0 {
		t.Fatal("every README block is marked skip")
	}
}

// tail returns the last n lines of s, indented.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"  ..."}, lines[len(lines)-n:]...)
	}
	return "  " + strings.Join(lines, "\n  ")
}
