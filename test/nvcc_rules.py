#!/usr/bin/env python3
"""Where nvcc refuses a device lambda that g++ accepts: the rules of CUDA's extended lambdas that
this project's code has broken, checked on the sources, so that a CPU-only CI sees what only the
CUDA build would (92a5a29: a function of deduced return type around a KOKKOS_LAMBDA).

For every KOKKOS_LAMBDA and KOKKOS_CLASS_LAMBDA (an extended __host__ __device__ lambda in a CUDA
build) it reports
  deduced    its enclosing function's return type is deduced (auto, decltype(auto), no trailing ->);
  generic    it is generic itself, or inside a generic lambda;
  private    its enclosing function is a private or protected member (defined in its class's body,
             or outside it, in any file the scan reads);
  constexpr  a variable of the enclosing function is first named inside `if constexpr` in its body.
(A first capture is not seen where the variable is declared in a form the scan does not read;
`constexpr` names, which need no capture, are left out.)

  nvcc_rules.py --self-test     checks the scan on small programs with a known answer, and where
                                nvcc is found (PATH, CUDA_HOME, /usr/local/cuda) that nvcc gives
                                the same answer for each
  nvcc_rules.py [ROOT]          the self-test, then the project's sources (ROOT: this file's
                                repository): lists each breach; exits 1 on a breach or a failure
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

LAMBDA_MACROS = ("KOKKOS_LAMBDA", "KOKKOS_CLASS_LAMBDA")
KEYWORDS = {"if", "for", "while", "switch", "catch", "return", "else", "do", "try", "sizeof", "alignof",
            "decltype", "static_assert", "new", "delete", "throw", "case", "using", "typename", "template",
            "const", "constexpr", "static", "auto", "struct", "class", "namespace", "enum", "union", "operator",
            "requires", "noexcept", "co_return", "goto", "default", "public", "private", "protected"}


def blank(text):
    """The text with comments, string and character literals and preprocessor lines blanked (same
    length, newlines kept), so that braces and words are the code's own."""
    out = list(text)
    i, n = 0, len(text)

    def wipe(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":  # a directive, with its continued lines
            j = i
            while j < n and (text[j] != "\n" or text[j - 1] == "\\"):
                j += 1
            wipe(i, j)
            i = j
            continue
        if c == "\n":
            line_start = True
            i += 1
            continue
        if not c.isspace():
            line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            wipe(i, j)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            wipe(i, j)
            i = j
        elif c == 'R' and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            wipe(i, j)
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # a digit separator: 1'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            wipe(i, j + 1)
            i = j + 1
        else:
            i += 1
    return "".join(out)


def matching(code, i, open_c, close_c, step=1):
    """Index of the bracket closing the one at i (step -1: opening the one closing at i); past the
    text's end where none does."""
    enter, leave = (open_c, close_c) if step > 0 else (close_c, open_c)
    depth = 0
    j = i
    while 0 <= j < len(code):
        if code[j] == enter:
            depth += 1
        elif code[j] == leave:
            depth -= 1
            if depth == 0:
                return j
        j += step
    return j


def opening(code, j, open_c, close_c):
    return matching(code, j, open_c, close_c, -1)


class Brace:
    def __init__(self, pos, header, parent):
        self.pos, self.header, self.parent = pos, header, parent
        self.end = None
        self.kind, self.detail = classify(header)


def header_of(code, pos):
    """The text before the brace at pos back to the statement's start (a ; { or } outside brackets)."""
    depth = 0
    i = pos - 1
    while i >= 0:
        c = code[i]
        if c in ")]":
            depth += 1
        elif c in "([":
            depth -= 1
        elif depth == 0 and c in ";{}":
            break
        i -= 1
    return code[i + 1:pos]


def lambda_params(tail):
    """Where `tail` ends with a lambda's introducer and parameters (the body's brace next), its
    parameter text, and whether it is an extended (KOKKOS_*) one; else None."""
    t = tail.rstrip()
    t = re.sub(r"(\s*(mutable|constexpr|noexcept|KOKKOS_FUNCTION|__host__|__device__))*$", "", t)
    t = re.sub(r"\s*->\s*[\w:<>,\s\*&]+$", "", t).rstrip()
    if t.endswith(")"):
        o = opening(t, len(t) - 1, "(", ")")
        params = t[o + 1:-1]
        before = t[:o].rstrip()
        before = re.sub(r"(\s*(__host__|__device__))*$", "", before).rstrip()
        for macro in LAMBDA_MACROS:
            if before.endswith(macro) and not re.search(r"\w$", before[:-len(macro)]):
                return params, True
        if before.endswith("]"):
            return params, False
        return None
    if t.endswith("]"):
        return "", False
    return None


def classify(header):
    h = header.strip()
    lam = lambda_params(h)
    if lam is not None:
        params, extended = lam
        generic = re.search(r"\bauto\b", params) is not None
        return ("xlambda" if extended else "lambda"), generic
    if re.search(r"(^|[^\w])(else|do|try)$", h):
        return "control", None
    m = re.search(r"\b(if|for|while|switch|catch)\s*(constexpr\s*)?\($", h[:opening(h, len(h) - 1, "(", ")") + 1]) \
        if h.endswith(")") else None
    if m:
        return ("constexpr_if" if m.group(1) == "if" and m.group(2) else "control"), None
    m = re.search(r"\b(class|struct|union)\s+(\w+)?[^()=]*$", h)
    if m and not re.search(r"\b(enum)\b", h):
        return "type", "private" if m.group(1) == "class" else "public"
    if re.search(r"\b(namespace|enum)\b[^()=]*$", h) or h == "extern \"C\"":
        return "scope", None
    if not h or re.search(r"(=|,|\(|\breturn|\[)$", h) or re.search(r"[\w>\]]$", h) and "(" not in h:
        return "init", None
    if re.search(r"\)", h):
        return "function", None
    return "init", None


def braces(code):
    """Every brace pair, with its kind, parent and end."""
    out, stack = [], []
    for i, c in enumerate(code):
        if c == "{":
            b = Brace(i, header_of(code, i), stack[-1] if stack else None)
            out.append(b)
            stack.append(b)
        elif c == "}" and stack:
            stack.pop().end = i
    for b in stack:
        b.end = len(code)
    return out


def without_templates(header):
    """A function header without its template heads."""
    h = header.strip()
    while True:
        m = re.match(r"template\s*<", h)
        if not m:
            return h
        h = h[matching(h, m.end() - 1, "<", ">") + 1:].lstrip()


def deduced(header):
    """Whether a function header's return type is deduced."""
    h = without_templates(header)
    h = re.sub(r"^requires\b[^)]*\)\s*", "", h) if h.startswith("requires") else h
    h = re.sub(r"^(\[\[[^\]]*\]\]\s*|(static|inline|constexpr|consteval|virtual|friend|explicit|KOKKOS_INLINE_FUNCTION|"
               r"KOKKOS_FUNCTION|KOKKOS_FORCEINLINE_FUNCTION|__host__|__device__)\b\s*)*", "", h)
    if not re.match(r"(auto|decltype\s*\(\s*auto\s*\))\b", h):
        return False
    # The parameter list: the first parenthesis after the function's name.
    m = re.match(r"(auto|decltype\s*\(\s*auto\s*\))\s*[\w:~<>]+\s*\(", h)
    if not m:
        return False
    close = matching(h, m.end() - 1, "(", ")")
    return "->" not in h[close:]


def access_at(code, cls, pos):
    """The access in force at pos inside the class body `cls`."""
    access = cls.detail
    for m in re.finditer(r"\b(public|private|protected)\s*:(?!:)", code[cls.pos:pos]):
        # only the labels of this body, not of nested classes'
        at = cls.pos + m.start()
        inner = [b for b in cls_children(cls) if b.pos < at < b.end]
        if not inner:
            access = m.group(1)
    return access


_children = {}


def cls_children(b):
    return _children.get(id(b), [])


def declarator(header):
    """A function header's text up to its parameter list (its template heads left out): the
    return type and the (qualified) name."""
    h = without_templates(header)
    return h[:h.find("(")] if "(" in h else h


def class_index(files):
    """name -> [(code, brace)] for every class or struct body of the files ((code, braces) pairs)."""
    index = {}
    for code, bs in files:
        for b in bs:
            if b.kind == "type":
                m = re.search(r"\b(class|struct|union)\s+(\w+)", b.header)
                if m:
                    index.setdefault(m.group(2), []).append((code, b))
    return index


def member_access(index, cls_name, method):
    """The access of `method` declared in the body of class `cls_name`, or None where unseen."""
    for code, cls in index.get(cls_name, []):
        for m in re.finditer(r"(?<![\w:.>])%s\s*\(" % re.escape(method), code[cls.pos + 1:cls.end]):
            at = cls.pos + 1 + m.start()
            if any(b.pos < at < b.end for b in cls_children(cls)):
                continue  # a call inside an inline body, or a nested class's member
            return access_at(code, cls, at)
    return None


def declared_names(text):
    """Names the text declares as variables (a rough reading: a type word, then the name, then
    = ; , ) { or [), less `constexpr` ones and type aliases."""
    names = set()
    for m in re.finditer(r"(?<![\w:])((?:const\s+)?[\w:]+(?:\s*<[^;{}()]*?>)?[\s\*&]+)(\w+)\s*(?=[=;,\){\[])", text):
        typ, name = m.group(1).strip(), m.group(2)
        first = typ.split()[0]
        if name in KEYWORDS or first in ("return", "using", "typedef", "constexpr", "goto", "case", "throw", "delete",
                                         "new", "else", "co_return"):
            continue
        if re.search(r"\bconstexpr\b", text[max(0, m.start() - 20):m.start()]):
            continue
        names.add(name)
    for m in re.finditer(r"\[\s*([\w\s,]+)\]\s*=", text):  # structured bindings
        if re.search(r"\bauto\s*&?\s*$", text[:m.start()]):
            names.update(w.strip() for w in m.group(1).split(","))
    return names


def parse(text):
    """A file's blanked code and its braces (their children noted)."""
    code = blank(text)
    bs = braces(code)
    for b in bs:
        if b.parent is not None:
            _children.setdefault(id(b.parent), []).append(b)
    return code, bs


def breaches(code, bs, index):
    """(position, rule, message) for each breach in one file's blanked code."""
    found = []
    for b in bs:
        if b.kind != "xlambda":
            continue
        if b.detail:
            found.append((b.pos, "generic", "a KOKKOS_LAMBDA with an `auto` parameter"))
        p = b.parent
        func = None
        while p is not None:
            if p.kind == "lambda" and p.detail:
                found.append((b.pos, "generic", "a KOKKOS_LAMBDA inside a generic lambda"))
            if p.kind == "function" and func is None:
                func = p
            p = p.parent
        if func is None:
            continue
        if deduced(func.header):
            name = re.search(r"(\w+)\s*\(", func.header[func.header.find("auto"):])
            found.append((b.pos, "deduced", "a KOKKOS_LAMBDA in `%s`, whose return type is deduced" %
                          (name.group(1) if name else "?")))
        access, name = None, None
        if func.parent is not None and func.parent.kind == "type":
            access = access_at(code, func.parent, func.pos)
            m = re.search(r"(\w+)\s*\(", func.header)
            name = m.group(1) if m else "?"
        else:
            m = re.search(r"(\w+)(?:\s*<[^<>()]*>)?::(~?\w+)\s*$", declarator(func.header))
            if m:
                access, name = member_access(index, m.group(1), m.group(2)), m.group(1) + "::" + m.group(2)
        if access in ("private", "protected"):
            found.append((b.pos, "private", "a KOKKOS_LAMBDA in `%s`, a private or protected member" % name))
        # A first capture inside `if constexpr`: a name the function declares before the lambda
        # (or takes as a parameter), named in such a block of the lambda and nowhere before it there.
        header_params = func.header[func.header.find("("):]
        outer = declared_names(header_params + ";" + code[func.pos + 1:b.pos])
        body = code[b.pos + 1:b.end]
        inner_decl = declared_names(body)
        for c in [x for x in bs if x.kind == "constexpr_if" and b.pos < x.pos < b.end]:
            owner = c.parent
            while owner is not None and owner.kind not in ("xlambda", "lambda", "function"):
                owner = owner.parent
            if owner is not b:
                continue
            cond_start = code.rfind("if", b.pos, c.pos)
            before = code[b.pos + 1:cond_start]
            block = code[cond_start:c.end]
            for name in sorted(outer - inner_decl):
                if re.search(r"(?<![\w.>:])%s\b" % re.escape(name), block) and \
                   not re.search(r"(?<![\w.>:])%s\b" % re.escape(name), before):
                    found.append((b.pos, "constexpr", "`%s` first named inside `if constexpr` in a KOKKOS_LAMBDA" % name))
    return found


def check_text(text):
    _children.clear()
    code, bs = parse(text)
    return breaches(code, bs, class_index([(code, bs)]))


def check_tree(root):
    _children.clear()
    files = []
    for folder in ("app", "lib", "physics", "benchmarks", "test"):
        for dirpath, _, names in os.walk(os.path.join(root, folder)):
            for f in sorted(names):
                if f.endswith((".hpp", ".cpp", ".h", ".cu")):
                    path = os.path.join(dirpath, f)
                    with open(path, encoding="utf-8") as fh:
                        text = fh.read()
                    files.append((path, text) + parse(text))
    index = class_index([(code, bs) for _, _, code, bs in files])
    count = 0
    for path, text, code, bs in files:
        if not any(m in text for m in LAMBDA_MACROS):
            continue
        for pos, rule, message in breaches(code, bs, index):
            line = text.count("\n", 0, pos) + 1
            print("%s:%d: %s: %s" % (os.path.relpath(path, root), line, rule, message))
            count += 1
    return count


# Programs with a known answer: (name, the rule nvcc names or None, the source). KOKKOS_LAMBDA is
# defined as Kokkos defines it for CUDA.
HEAD = ("#define KOKKOS_LAMBDA [=] __host__ __device__\n"
        "template <class F> __global__ void run(F f) { f(0); }\n")
CASES = [
    ("deduced", "deduced", "template <class T> auto f(T x) {\n"
     "  run<<<1, 1>>>(KOKKOS_LAMBDA(int i) { (void)x; (void)i; });\n  return x;\n}\n"
     "int main() { return f(0); }\n"),
    ("trailing", None, "template <class T> auto f(T x) -> T {\n"
     "  run<<<1, 1>>>(KOKKOS_LAMBDA(int i) { (void)x; (void)i; });\n  return x;\n}\n"
     "int main() { return f(0); }\n"),
    ("in_generic", "generic", "int main() {\n  auto g = [](auto x) {\n"
     "    run<<<1, 1>>>(KOKKOS_LAMBDA(int i) { (void)x; (void)i; });\n  };\n  g(1);\n}\n"),
    ("in_plain_lambda", None, "int main() {\n  auto g = [](int x) {\n"
     "    run<<<1, 1>>>(KOKKOS_LAMBDA(int i) { (void)x; (void)i; });\n  };\n  g(1);\n}\n"),
    ("private", "private", "class A {\n public:\n  void go() { step(); }\n\n private:\n  void step() {\n"
     "    run<<<1, 1>>>(KOKKOS_LAMBDA(int i) { (void)i; });\n  }\n};\nint main() { A a; a.go(); }\n"),
    ("private_outside", "private", "class A {\n public:\n  void go();\n\n private:\n  void step();\n};\n"
     "void A::go() { step(); }\nvoid A::step() {\n  run<<<1, 1>>>(KOKKOS_LAMBDA(int i) { (void)i; });\n}\n"
     "int main() { A a; a.go(); }\n"),
    ("public_outside", None, "class A {\n public:\n  void go();\n\n private:\n  int n = 0;\n};\n"
     "void A::go() {\n  run<<<1, 1>>>(KOKKOS_LAMBDA(int i) { (void)i; });\n}\nint main() { A a; a.go(); }\n"),
    ("public", None, "struct A {\n  void go() {\n    run<<<1, 1>>>(KOKKOS_LAMBDA(int i) { (void)i; });\n  }\n"
     "};\nint main() { A a; a.go(); }\n"),
    ("constexpr_first", "constexpr", "template <bool B> void f(int a, int b) {\n  const int c = a + b;\n"
     "  run<<<1, 1>>>(KOKKOS_LAMBDA(int i) {\n    if constexpr (B) {\n      (void)c;\n    }\n"
     "    (void)i;\n  });\n}\nint main() { f<true>(1, 2); }\n"),
    ("constexpr_named_before", None, "template <bool B> void f(int a, int b) {\n  const int c = a + b;\n"
     "  run<<<1, 1>>>(KOKKOS_LAMBDA(int i) {\n    const int d = c;\n    if constexpr (B) {\n      (void)c;\n"
     "    }\n    (void)i; (void)d;\n  });\n}\nint main() { f<true>(1, 2); }\n"),
]


def find_nvcc():
    for c in (shutil.which("nvcc"), os.path.join(os.environ.get("CUDA_HOME", ""), "bin", "nvcc"),
              "/usr/local/cuda/bin/nvcc"):
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def self_test():
    failures = 0
    nvcc = find_nvcc()
    scratch = tempfile.mkdtemp(prefix="nvcc_rules_")
    try:
        for name, rule, body in CASES:
            source = HEAD + body
            rules = sorted({r for _, r, _ in check_text(source)})
            expected = [rule] if rule else []
            verdict = "ok" if rules == expected else "FAIL"
            failures += verdict != "ok"
            line = "%-4s %-24s scan: %s (expected %s)" % (verdict, name, rules or "none", expected or "none")
            if nvcc:
                path = os.path.join(scratch, name + ".cu")
                with open(path, "w") as fh:
                    fh.write(source)
                run = subprocess.run([nvcc, "-std=c++20", "--extended-lambda", "-arch=sm_90", "-c", path, "-o",
                                      os.path.join(scratch, name + ".o")], capture_output=True, text=True)
                refused = run.returncode != 0
                agrees = refused == bool(rule)
                failures += not agrees
                line += "; nvcc %s%s" % ("refuses" if refused else "accepts", "" if agrees else "  <- DISAGREES")
                if refused and not agrees:
                    line += "\n" + run.stderr.strip()
            print(line)
        if not nvcc:
            print("(no nvcc found: the scan checked against the expected answers only)")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return failures


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--self-test":
        sys.exit(1 if self_test() else 0)
    failed = self_test()
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    n = check_tree(root)
    print("%d breach%s of nvcc's extended-lambda rules" % (n, "" if n == 1 else "es"))
    sys.exit(1 if n or failed else 0)
