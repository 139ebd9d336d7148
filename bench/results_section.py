"""Writes one section of bench/RESULTS.md, the part between
<!-- NAME: ... --> and <!-- /NAME -->, leaving the rest as it is (run.py
keeps everything from the first such section on)."""
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write_section(name, lines, script=None):
    """`lines` are the section's body; the markers are added here. `script`:
    what wrote it (default: bench/NAME.py, '-' read as '_')."""
    script = script or f"bench/{name.replace('-', '_')}.py"
    section = "\n".join([f"<!-- {name}: written by {script} -->",
                         *lines, f"<!-- /{name} -->"]) + "\n"
    print(section)
    path = os.path.join(ROOT, "bench/RESULTS.md")
    with open(path) as f:
        text = f.read()
    start = text.find(f"<!-- {name}:")
    if start >= 0:
        end_marker = f"<!-- /{name} -->\n"
        end = text.index(end_marker) + len(end_marker)
        text = text[:start] + section + text[end:]
    else:
        text = text.rstrip("\n") + "\n\n" + section
    with open(path, "w") as f:
        f.write(text)


def report(lines, args, data, script):
    """A benchmark's result: `lines` printed (once), `data` written to
    --json FILE, and the lines as RESULTS.md's section --write-results NAME
    (`args.json`, `args.write_results`; either may be unset)."""
    if args.json:
        with open(args.json, "w") as f:
            json.dump(data, f, indent=1)
    if args.write_results:
        write_section(args.write_results, lines, script=script)  # prints it
    else:
        print("\n".join(lines))
