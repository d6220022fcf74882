"""Replaces one generated section of a Markdown report (docs/FIDELITY.md), kept between
"<!-- begin: NAME -->" and "<!-- end: NAME -->" markers, or appends it; the rest is left as written."""
import os


def markers(name):
    return f"<!-- begin: {name} -->", f"<!-- end: {name} -->"


def write_section(path, name, lines):
    """lines: the section's body (without markers)."""
    begin, end = markers(name)
    section = "\n".join([begin, *lines, end])
    text = open(path).read() if os.path.exists(path) else "# mutwo fidelity report\n"
    if begin in text:
        head, rest = text.split(begin, 1)
        text = head + section + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    with open(path, "w") as f:
        f.write(text)
