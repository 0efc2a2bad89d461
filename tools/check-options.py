#!/usr/bin/env python3
"""tools/check-options.py — the options of every command agree everywhere
they are written, so they cannot drift apart unnoticed.

    tools/check-options.py LOBES README [SRC_CMD_DIR]
    tools/check-options.py --captured DIR README [SRC_CMD_DIR]

The commands are the ones `lobes --help` lists (new commands are checked as
they appear). For each command:

1. the options `lobes COMMAND -h` prints (every --long and -x word) are the
   options of its entry in the man page (`lobes --man`), both ways;
2. README's command table has a row for it, and every option that row
   shows is one `-h` prints; a row for no command is an error too;
3. with SRC_CMD_DIR (src/cmd): every long option of the getopt table in
   the file that defines CMD(COMMAND), and every letter of its short option
   string, is one `-h` prints.

--captured DIR reads the outputs from DIR/help.txt, DIR/man.txt and
DIR/h-COMMAND.txt instead of running LOBES (the test plants drift there).
Prints one line per disagreement and exits 1 when there is any, 0 silently
otherwise, 2 on a usage error.
"""
import os
import re
import subprocess
import sys

LONG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
SHORT = re.compile(r"(?<![\w`'/.-])-[a-zA-Z](?=[ ,|\]]|$)", re.M)


def options(text):
    return set(LONG.findall(text)) | set(SHORT.findall(text))


def run(lobes, *args):
    p = subprocess.run([lobes, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, check=False)
    if p.returncode != 0:
        sys.exit("check-options: `lobes %s` exited %d: %s" % (" ".join(args), p.returncode,
                                                               p.stderr.strip()))
    return p.stdout


def commands_of(help_text):
    names, inside = [], False
    for line in help_text.splitlines():
        if line.startswith("commands:"):
            inside = True
        elif inside and not line.strip():
            break
        elif inside:
            names.append(line.split()[0])
    return names


def man_sections(man):
    """Command name -> the text of its entry, with roff's \\- unescaped."""
    out = {}
    for part in man.split(".TP\n")[1:]:
        m = re.match(r"\.B lobes ([a-z]+)", part)
        if m:
            body = part.split(".SH ", 1)[0]
            out[m.group(1)] = body.replace("\\-", "-").replace("\\\\", "\\")
    return out


def readme_rows(readme):
    """Command name -> the first cell of its row in the command table (the
    one whose header is `| command |`; it ends at the first line that is not
    a table row)."""
    rows, inside = {}, False
    for line in readme.splitlines():
        if line.startswith("| command |"):
            inside = True
            continue
        if not inside:
            continue
        if not line.startswith("|"):
            break
        cell = re.split(r"(?<!\\)\|", line)[1].strip()
        m = re.match(r"`lobes ([a-z]+)", cell)
        if m:
            rows[m.group(1)] = cell.replace("\\|", "|")
    return rows


def source_options(src_dir, name):
    """The long options and short letters of CMD(name)'s getopt tables."""
    for f in sorted(os.listdir(src_dir)):
        if not f.endswith(".c"):
            continue
        text = open(os.path.join(src_dir, f), encoding="utf-8").read()
        if re.search(r"^CMD\(%s\)" % re.escape(name), text, re.M):
            longs = {"--" + o for o in re.findall(
                r'\{\s*"([a-z][a-z0-9-]*)",\s*(?:no|required|optional)_argument', text)}
            shorts = set()
            for s in re.findall(r"getopt_long\([^,]+,[^,]+,\s*\"([^\"]*)\"", text):
                shorts |= {"-" + c for c in s if c.isalpha()}
            return longs | shorts, f
    return None, None


def main(argv):
    if len(argv) >= 2 and argv[0] == "--captured":
        cap, rest = argv[1], argv[2:]
        read = lambda n: open(os.path.join(cap, n), encoding="utf-8").read()
        help_text, man = read("help.txt"), read("man.txt")
        helps = lambda c: read("h-%s.txt" % c)
    elif len(argv) >= 1 and not argv[0].startswith("-"):
        lobes, rest = argv[0], argv[1:]
        help_text, man = run(lobes, "--help"), run(lobes, "--man")
        helps = lambda c: run(lobes, c, "-h")
    else:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    if len(rest) not in (1, 2):
        print("usage: tools/check-options.py LOBES|--captured DIR README [SRC_CMD_DIR]",
              file=sys.stderr)
        return 2
    readme = open(rest[0], encoding="utf-8").read()
    src_dir = rest[1] if len(rest) == 2 else None

    bad = []
    cmds = commands_of(help_text)
    if not cmds:
        bad.append("lobes --help lists no commands")
    sections, rows = man_sections(man), readme_rows(readme)
    for c in cmds:
        h = options(helps(c))
        if c not in sections:
            bad.append("%s: no entry in the man page" % c)
        else:
            m = options(sections[c])
            for o in sorted(h - m):
                bad.append("%s: %s is in -h but not in the man page" % (c, o))
            for o in sorted(m - h):
                bad.append("%s: %s is in the man page but not in -h" % (c, o))
        if c not in rows:
            bad.append("%s: no row in README's command table" % c)
        else:
            for o in sorted(options(rows[c]) - h):
                bad.append("%s: README's row shows %s, which -h does not print" % (c, o))
        if src_dir:
            s, f = source_options(src_dir, c)
            if s is None:
                bad.append("%s: no CMD(%s) in %s" % (c, c, src_dir))
            else:
                for o in sorted(s - h):
                    bad.append("%s: %s/%s accepts %s, which -h does not print" % (c, src_dir, f, o))
    for r in sorted(set(rows) - set(cmds)):
        bad.append("%s: README's command table has a row for it, but lobes has no such command" % r)
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
