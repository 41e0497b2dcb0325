"""A new domain ontology from a template: ``templates/<name>.jsonld`` under a new prefix and namespace.

The template is looked up in ``<ontology dir>/templates/`` first, then in the ``ontologies/templates/``
shipped with mabos. The domain name is kebab-case (``pet-shop``); its prefix is the name without hyphens
(``petshop``: the shapes want ``[a-z][a-z0-9]*``) and its namespace ``https://w3id.org/mabos/<domain>#``.
Every ``@id``, ``@type``, key and context entry in the template's namespace or prefix is rewritten to the
new one; other vocabularies (``biz:``, ``mabos:`` ...) stay.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kg.errors import ConflictError, InputError
from kg.ontology.files import (
    IRI_BASE,
    STANDARD_PREFIXES,
    ActiveSet,
    DomainFile,
    ontology_json,
    read_domain_file,
    repository_ontology_dir,
)

DOMAIN_RE = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*\Z")
MAX_DOMAIN = 40
#: Names a domain may not take: directories of the ontology dir and well-known prefixes.
RESERVED_DOMAINS = frozenset({"templates", "proposals", "mabos", "biz", "sh", "schema", "xml", *STANDARD_PREFIXES})
TEMPLATE_RE = re.compile(r"^[a-z][a-z0-9_-]{0,63}\Z")


def sanitise_domain(name: str) -> str:
    """The domain name as it will be used (lower case, spaces and ``_`` as ``-``); InputError if unusable."""
    clean = re.sub(r"[\s_]+", "-", name.strip().lower())
    if not DOMAIN_RE.match(clean) or len(clean) > MAX_DOMAIN:
        rule = f"lowercase letters and digits in words joined by '-', at most {MAX_DOMAIN} characters"
        raise InputError("domain", f"must be {rule}, starting with a letter (e.g. 'pet-shop'); got {name[:80]!r}")
    if clean in RESERVED_DOMAINS or prefix_for(clean) in RESERVED_DOMAINS:
        raise InputError("domain", f"{clean!r} is reserved (taken by a directory or a standard prefix)")
    return clean


def prefix_for(domain: str) -> str:
    """The CURIE prefix of a (sanitised) domain: its name without hyphens."""
    return domain.replace("-", "")


def template_path(template: str, ontology_dir: Path) -> Path:
    """Where template ``template`` lives; InputError naming the available ones if nowhere."""
    if not TEMPLATE_RE.match(template):
        raise InputError("template", f"must be a template name such as 'ecommerce', got {template[:80]!r}")
    dirs = [ontology_dir / "templates"]
    shipped = repository_ontology_dir()
    if shipped is not None:
        dirs.append(shipped / "templates")
    for directory in dirs:
        if (directory / f"{template}.jsonld").is_file():
            return directory / f"{template}.jsonld"
    available = sorted({p.stem for d in dirs if d.is_dir() for p in d.glob("*.jsonld")})
    raise InputError("template", f"no template {template!r} (available: {', '.join(available) or 'none'})")


def _rewriter(old_prefix: str, old_ns: str, new_prefix: str, new_ns: str) -> Callable[[Any], Any]:
    curie = re.compile(rf"^{re.escape(old_prefix)}:(?!//)(\S+)\Z")

    def text(value: str) -> str:
        if value.startswith(old_ns):
            return new_ns + value[len(old_ns) :]
        match = curie.match(value)
        return f"{new_prefix}:{match.group(1)}" if match else value

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            return {(new_prefix if key == old_prefix else text(key)): walk(item) for key, item in value.items()}
        if isinstance(value, list):
            return [walk(item) for item in value]
        return text(value) if isinstance(value, str) else value

    return walk


def scaffold_document(template: DomainFile, domain: str) -> dict[str, Any]:
    """The template's JSON rewritten into ``domain``'s prefix and namespace."""
    new_ns, prefix = f"{IRI_BASE}{domain}#", prefix_for(domain)
    data: dict[str, Any] = _rewriter(template.prefix, template.namespace, prefix, new_ns)(template.data)
    data["@id"] = new_ns
    data["mabos:domain"] = domain
    data["mabos:prefix"] = prefix
    context = data.get("@context")
    if isinstance(context, dict):
        context.setdefault(prefix, new_ns)
    if "rdfs:label" in data:
        data["rdfs:label"] = f"{domain} (from the {template.name} template)"
    return data


def scaffold(template: str, domain: str, ontology_dir: Path, active: ActiveSet) -> tuple[Path, str]:
    """The path and text of a new domain file from a template (nothing is written).

    Raises:
        InputError: a bad domain or template name, or a template that does not parse.
        ConflictError: the domain (or its prefix or namespace) exists already.
    """
    name = sanitise_domain(domain)
    target = ontology_dir / f"{name}.jsonld"
    if target.exists() or name in active.files:
        raise ConflictError(f"domain: {name!r} exists already ({target})")
    new_ns = f"{IRI_BASE}{name}#"
    for other in active.files.values():
        if not other.error and (other.prefix == prefix_for(name) or other.namespace == new_ns):
            raise ConflictError(f"domain: prefix or namespace of {name!r} is already used by {other.path.name}")
    source = read_domain_file(template_path(template, ontology_dir))
    if source.error:
        raise InputError("template", f"{source.path}: {source.error}")
    text = ontology_json(scaffold_document(source, name))
    written = read_domain_file(target, text.encode("utf-8"))
    # nothing may stay in the template's namespace - unless the domain is named like the template (same namespace)
    same = new_ns == source.namespace
    left = [] if same else sorted({str(n) for t in written.graph for n in t if str(n).startswith(source.namespace)})
    if written.error or left:
        raise InputError("template", f"{source.path} does not rewrite cleanly: {written.error or ', '.join(left[:5])}")
    return target, text


__all__ = [
    "DOMAIN_RE",
    "RESERVED_DOMAINS",
    "prefix_for",
    "sanitise_domain",
    "scaffold",
    "scaffold_document",
    "template_path",
]
