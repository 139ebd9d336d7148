#!/usr/bin/env python3
"""A man page (section 1) from a program's own --version and --help, so that
the page and the program cannot tell two stories.

  make_man.py PROGRAM NAME SUMMARY OUT [--see-also TEXT] [--extra FILE]

NAME is the command's name on the page; SUMMARY its one line; --extra a
troff fragment appended (for what --help does not say)."""
import argparse
import subprocess


def escape(line):
    """A line of text as troff shows it: backslashes and minus signs (option
    dashes) escaped, a leading dot or quote kept from being read as a
    request."""
    line = line.replace("\\", "\\e").replace("-", "\\-")
    if line.startswith((".", "'")):
        line = "\\&" + line
    return line


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("program")
    ap.add_argument("name")
    ap.add_argument("summary")
    ap.add_argument("out")
    ap.add_argument("--see-also", default="")
    ap.add_argument("--extra")
    args = ap.parse_args()
    run = lambda flag: subprocess.run([args.program, flag], capture_output=True,
                                      text=True, check=True).stdout
    version = run("--version").strip().splitlines()[0]
    help_text = run("--help")
    lines = [
        f'.TH {args.name.upper()} 1 "" "{escape(version)}" "jitcache"',
        ".SH NAME",
        f"{args.name} \\- {escape(args.summary)}",
        ".SH DESCRIPTION",
        f"The text \\fB{args.name} --help\\fR prints:",
        ".PP",
        ".nf",
        *[escape(l) for l in help_text.rstrip("\n").splitlines()],
        ".fi",
    ]
    if args.extra:
        with open(args.extra) as f:
            lines.append(f.read().rstrip("\n"))
    if args.see_also:
        lines += [".SH SEE ALSO", escape(args.see_also)]
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
