#!/usr/bin/env python3
"""Places every ```swift block of README.md and of the DocC articles in a package, as a user
who pastes it would (the rule is README's, "Snippets as pasted"):

- a block whose first line is `// swift-tools-version:…` is a package's Package.swift. README's is
  the scratch package's manifest, as pasted; any other document's is checked on its own
  (`swift package dump-package`);
- a block whose first line is a path comment, `// Sources/<Target>/<File>.swift` or
  `// Tests/<Target>/<File>.swift`, goes at that path: the blocks of one document that name the
  same target form one small app (README's are the manifest's MyApp and MyAppTests), and blocks
  that name the same file are pasted into it one after the other;
- any other block compiles alone, in a target of its own: a test target if it imports Testing,
  an executable one if it has `@main` (its file is Snippet.swift) or statements at the top
  level (its file is main.swift), a library otherwise — depending on the products its imports
  name, nothing else.

Every document is its own app: an article's path targets and every block alone get names of
their own in the one scratch package (`<Article>_<Target>`, `<Document>_L<line>`; an article's
`import <Target>` lines say the new name), so AppKernel is built once for all of them.

Usage: place.py plan <repo>            prints one line per block (tab-separated): where it goes
       place.py write <repo> <package> writes the package (its manifest must not exist yet)
       place.py blame <repo> <package>  reads compiler output on stdin and names the blocks
"""
import json
import os
import re
import sys

PRODUCTS = ["AppKernelCore", "AppKernel", "AppKernelTesting", "AppKernelAuth", "AppKernelSDK", "AppKernelSDKTesting",
            "AppKernelREST", "AppKernelEmbeddedOrg", "AppKernelPOSIX", "AppKernelModules", "AppKernelStore", "AppKernelSync"]
SYSTEM_MODULES = {"Foundation", "FoundationEssentials", "Dispatch", "Testing", "Synchronization", "Glibc", "PackageDescription"}
README_URL = "https://example.com/AppKernel.git"   # the URL README's manifest names: mirrored to the checkout
PATH_LINE = re.compile(r"^// (Sources|Tests)/([A-Za-z_][A-Za-z0-9_]*)/([A-Za-z0-9_+.-]+\.swift)$")
IMPORT_LINE = re.compile(r"^\s*(?:@testable\s+|@_spi\(\w+\)\s+|(?:public|internal|package)\s+)*import\s+(\w+)\s*$")
DECLARATION = re.compile(r"^(@|->|where\b|import\b|func\b|struct\b|class\b|final\b|enum\b|extension\b|protocol\b|actor\b|"
                         r"typealias\b|private\b|fileprivate\b|internal\b|public\b|package\b|nonisolated\b|//|/\*|\*|}|\)|$)")

# Blocks not pasteable yet, each with why: skipped by the build and listed by it. Keys are
# "<document>:<first line of the block>". README may have none (SnippetsPasteTests checks).
NOT_YET = {
}


# An article that tests another article's app pastes its blocks into that app's package: the
# article's `// Tests/MyAppTests/…` files sit beside the other's `// Sources/MyApp/…` ones.
CONTINUES = {"TestingThePortedTemplate": "PortingTheForceiosTemplate"}


class PlanError(Exception):
    pass


def documents(repo):
    found = ["README.md"]
    sources = os.path.join(repo, "Sources")
    for module in sorted(os.listdir(sources)):
        catalog = os.path.join(sources, module, module + ".docc")
        if os.path.isdir(catalog):
            found += [os.path.join("Sources", module, module + ".docc", name)
                      for name in sorted(os.listdir(catalog)) if name.endswith(".md")]
    return found


def blocks(repo, document):
    """(line of the ```swift fence, the block's lines) for every swift block of a document."""
    lines = open(os.path.join(repo, document), encoding="utf-8").read().split("\n")
    found, index = [], 0
    while index < len(lines):
        fence = lines[index].strip()
        if fence == "```swift":
            indent = len(lines[index]) - len(lines[index].lstrip())
            end = index + 1
            while end < len(lines) and lines[end].strip() != "```":
                end += 1
            if end == len(lines):
                raise PlanError(f"{document}:{index + 1}: a ```swift block that never ends")
            found.append((index + 1, [line[indent:] if line[:indent].strip() == "" else line for line in lines[index + 1:end]]))
            index = end
        index += 1
    return found


def imports(lines):
    return [match.group(1) for match in map(IMPORT_LINE.match, lines) if match]


def has_statements(lines):
    """True when a line at the top level is a statement, not a declaration (so: main.swift)."""
    depth = 0
    in_string = False
    for line in lines:
        stripped = line.strip()
        if stripped.startswith('"""'):
            in_string = not in_string if stripped.count('"""') == 1 else in_string
            continue
        if in_string:
            continue
        if depth == 0 and not DECLARATION.match(stripped):
            return True
        code = re.sub(r'"(\\.|[^"\\])*"', '""', line.split("//")[0])
        depth += code.count("{") + code.count("(") + code.count("[") - code.count("}") - code.count(")") - code.count("]")
        if '"""' in code:
            in_string = code.count('"""') % 2 == 1
    return False


def stem(document):
    name = "README" if document == "README.md" else os.path.splitext(os.path.basename(document))[0]
    return CONTINUES.get(name, name)


def plan(repo):
    """Every block's place: a list of dicts (document, line, kind, target, path, imports, …)."""
    placed, manifests = [], []
    for document in documents(repo):
        doc_blocks = blocks(repo, document)
        local_targets = {PATH_LINE.match(lines[0].strip()).group(2) for other in documents(repo) if stem(other) == stem(document)
                         for _, lines in blocks(repo, other) if lines and PATH_LINE.match(lines[0].strip())}
        for line, lines in doc_blocks:
            first = lines[0].strip() if lines else ""
            entry = {"document": document, "line": line, "lines": lines, "imports": imports(lines)}
            key = f"{document}:{first}"
            if key in NOT_YET:
                entry.update(kind="not-yet", target="-", path="-", reason=NOT_YET[key])
            elif first.startswith("// swift-tools-version:"):
                entry.update(kind="manifest", target="-", path="Package.swift" if document == "README.md" else f"Manifests/{stem(document)}_L{line}/Package.swift")
                manifests.append(entry)
            elif PATH_LINE.match(first):
                folder, target, name = PATH_LINE.match(first).groups()
                own = target if document == "README.md" else f"{stem(document)}_{target}"
                entry.update(kind="test" if folder == "Tests" else "source", target=own, path=f"{folder}/{own}/{name}",
                             rename={t: (t if document == "README.md" else f"{stem(document)}_{t}") for t in local_targets})
            else:
                own = f"{stem(document)}_L{line}"
                if "Testing" in entry["imports"]:
                    kind, path = "test", f"Tests/{own}/Snippet.swift"
                elif any(l.strip().startswith("@main") for l in lines):
                    kind, path = "executable", f"Sources/{own}/Snippet.swift"
                elif has_statements(lines):
                    kind, path = "executable", f"Sources/{own}/main.swift"
                else:
                    kind, path = "library", f"Sources/{own}/Snippet.swift"
                entry.update(kind=kind, target=own, path=path, rename={})
            placed.append(entry)
    matched = {f"{e['document']}:{e['lines'][0].strip() if e['lines'] else ''}" for e in placed if e["kind"] == "not-yet"}
    for key in sorted(set(NOT_YET) - matched):
        raise PlanError(f"NOT_YET names a block that no document has (pasteable now, or changed?): {key}")
    readme_manifests = [m for m in manifests if m["document"] == "README.md"]
    if len(readme_manifests) != 1:
        raise PlanError(f"README.md must have exactly one manifest block (first line // swift-tools-version:…); it has {len(readme_manifests)}")
    for entry in placed:
        for module in entry["imports"]:
            local = set(entry.get("rename", {}))
            if module not in PRODUCTS and module not in SYSTEM_MODULES and module not in local:
                raise PlanError(f"{entry['document']}:{entry['line']}: imports {module}, which is neither an AppKernel product, a toolchain module nor a target of the document")
    return placed


def file_text(entry):
    lines = list(entry["lines"])
    rename = entry.get("rename", {})
    for index, line in enumerate(lines):
        match = IMPORT_LINE.match(line)
        if match and match.group(1) in rename and rename[match.group(1)] != match.group(1):
            lines[index] = line.replace("import " + match.group(1), "import " + rename[match.group(1)])
    return "\n".join(lines) + "\n"


def target_declarations(placed, readme_targets):
    """Swift source for the targets README's manifest does not declare."""
    targets = {}
    for entry in placed:
        if entry["kind"] in ("manifest", "not-yet") or entry["target"] in readme_targets:
            continue
        target = targets.setdefault(entry["target"], {"test": entry["kind"] == "test", "executable": False, "deps": set()})
        target["executable"] |= entry["kind"] == "executable" or entry["path"].endswith("/main.swift") or \
            any(l.strip().startswith("@main") for l in entry["lines"])
        for module in entry["imports"]:
            if module in PRODUCTS:
                target["deps"].add(f'.product(name: "{module}", package: "AppKernel")')
            elif module in entry.get("rename", {}):
                target["deps"].add(f'"{entry["rename"][module]}"')
    out = []
    for name, target in sorted(targets.items()):
        kind = "testTarget" if target["test"] else "executableTarget" if target["executable"] else "target"
        out.append(f'    .{kind}(name: "{name}", dependencies: [{", ".join(sorted(target["deps"]))}]),')
    return out


def write(repo, package):
    placed = plan(repo)
    manifest = next(e for e in placed if e["kind"] == "manifest" and e["document"] == "README.md")
    text = "\n".join(manifest["lines"]) + "\n"
    readme_targets = set(re.findall(r'\.(?:executableTarget|target|testTarget)\(name: "(\w+)"', text))
    extra = target_declarations(placed, readme_targets)
    text += "\n// Added by .ci/snippets: a target for every other block and every article's app.\npackage.targets += [\n" + "\n".join(extra) + "\n]\n"
    files = {}   # blocks naming one file are pasted into it one after the other, in the document's order
    for entry in placed:
        if entry["kind"] != "not-yet":
            files.setdefault(entry["path"], []).append(entry)
    for relative, entries in files.items():
        path = os.path.join(package, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        content = ""
        for entry in entries:
            entry["offset"] = content.count("\n")
            content += text if entry is manifest else file_text(entry)
        if os.path.exists(path):
            raise PlanError(f"{path} exists already")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(content)
    with open(os.path.join(package, ".placed.json"), "w", encoding="utf-8") as handle:
        json.dump([dict({k: v for k, v in e.items() if k != "lines"}, count=len(e["lines"])) for e in placed], handle)


def blame(package):
    """Names the block behind each compiler diagnostic read from standard input."""
    placed = json.load(open(os.path.join(package, ".placed.json"), encoding="utf-8"))
    by_path = {}
    for e in placed:
        if e["path"] != "-" and "offset" in e:
            by_path.setdefault(os.path.realpath(os.path.join(package, e["path"])), []).append(e)
    pattern = re.compile(r"^(/[^:]+\.swift):(\d+):(\d+): (error|warning): (.*)$")
    named, seen = 0, set()
    for raw in sys.stdin:
        if raw in seen:
            continue
        seen.add(raw)
        match = pattern.match(raw.rstrip("\n"))
        if not match or match.group(4) != "error":
            continue
        line = int(match.group(2))
        entry = next((e for e in by_path.get(os.path.realpath(match.group(1)), []) if e["offset"] < line <= e["offset"] + e["count"]), None)
        if entry is None:
            continue
        offset = line - entry["offset"]
        print(f"{entry['document']}:{entry['line']}: the block placed at {entry['path']} does not compile: "
              f"{entry['document']} line {entry['line'] + offset}: error: {match.group(5)}")
        named += 1
    return named


def main(argv):
    try:
        if len(argv) == 3 and argv[1] == "plan":
            for entry in plan(argv[2]):
                deps = ",".join(entry["imports"])
                print(f"{entry['document']}:{entry['line']}\t{entry['kind']}\t{entry['target']}\t{entry['path']}\t{deps}")
        elif len(argv) == 4 and argv[1] == "write":
            write(argv[2], argv[3])
        elif len(argv) == 4 and argv[1] == "blame":
            return 0 if blame(argv[3]) > 0 else 1
        elif len(argv) == 3 and argv[1] == "targets":
            print("\n".join(sorted({e["target"] for e in plan(argv[2]) if e["target"] != "-"})))
        elif len(argv) == 3 and argv[1] == "not-yet":
            for entry in plan(argv[2]):
                if entry["kind"] == "not-yet":
                    print(f"{entry['document']}:{entry['line']}: not pasteable yet: {entry['reason']}")
        else:
            print(__doc__, file=sys.stderr)
            return 64
    except PlanError as error:
        print(f"snippets: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
