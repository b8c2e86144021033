#!/usr/bin/env python3
"""Every public item of the crate has an example in its rustdoc.

Reads the rustdoc JSON of the library (`cargo rustdoc --lib -- -Z unstable-options
--output-format json`, under RUSTC_BOOTSTRAP=1 on stable) and lists each public module,
type, trait, function, method, constant, static and macro whose documentation has no code
block. Enum variants and struct fields are documented by their type's example. Exits 1 when
any is missing.
"""
import json
import sys

KINDS = {"module", "struct", "enum", "trait", "function", "constant", "static",
         "type_alias", "macro", "union"}


def main(path):
    doc = json.load(open(path))
    index = doc["index"]
    seen, missing, checked = set(), [], 0

    def item(i):
        return index.get(str(i))

    def walk(iid, prefix, root=False):
        nonlocal checked
        if iid is None or iid in seen:
            return
        seen.add(iid)
        it = item(iid)
        if it is None or it.get("crate_id", 0) != 0:
            return
        (kind, inner), = it["inner"].items()
        if kind == "use":
            # A re-export: the item it names, under the public path.
            walk(inner.get("id"), prefix)
            return
        if not root and it.get("visibility") != "public":
            return
        path = prefix + ("::" + it["name"] if it.get("name") else "")
        if kind in KINDS:
            checked += 1
            if "```" not in (it.get("docs") or ""):
                missing.append(f"{kind} {path}")
        if kind == "module":
            for child in inner["items"]:
                walk(child, path)
        elif kind in ("struct", "enum", "union", "trait"):
            if kind == "trait":
                for child in inner["items"]:
                    walk(child, path)
            for impl_id in inner.get("impls", []):
                imp = item(impl_id)
                if not imp:
                    continue
                imp = imp["inner"]["impl"]
                # Inherent impls only: trait methods are documented by the trait.
                if imp.get("trait") is not None or imp.get("is_synthetic") or imp.get("blanket_impl"):
                    continue
                for child in imp["items"]:
                    walk(child, path)

    walk(doc["root"], "", root=True)
    print(f"{checked} public items checked, {len(missing)} without an example")
    for m in missing:
        print("  " + m)
    return 1 if missing or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "target/doc/kube_authn.json"))
