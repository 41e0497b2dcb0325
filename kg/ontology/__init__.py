"""Ontologies (design.md §6): JSON-LD files loaded with rdflib, the propose/validate/merge workflow, and the
conversion to a TypeQL 3 schema (:mod:`kg.ontology.typeql`)."""
