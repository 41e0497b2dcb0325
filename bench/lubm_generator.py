"""A seeded LUBM(N) instance generator: the UBA generator's profile, written in Python for the benchmarks.

The Lehigh University Benchmark's data generator (UBA) builds each university from fixed ranges; this
module follows those ranges (Guo, Pan and Heflin, "LUBM: A benchmark for OWL knowledge base systems",
J. Web Semantics 3(2), 2005, section 3.2 and the generator's profile):

    departments per university 15-25         research groups per department 10-20
    full professors 7-10, associate 10-14, assistant 8-11, lecturers 5-7 per department
    undergraduates 8-14 per faculty member, graduate students 3-4 per faculty member
    courses 1-2 and graduate courses 1-2 taught by each faculty member
    undergraduates take 2-4 courses, graduate students 1-3 graduate courses
    1 in 5 undergraduates has an advisor (a professor); every graduate student has one
    1 in 4-5 graduate students is a teaching assistant of a course, 1 in 3-4 a research assistant
    publications: full professor 15-20, associate 10-18, assistant 5-10, lecturer 0-5, graduate student 0-5
    degrees (undergraduate, masters, doctoral) from any of 1,000 universities; one full professor heads the
    department; every person has a name, an email address and a telephone number; professors a research
    interest

IRIs follow the official data (``http://www.Department3.University0.edu/FullProfessor2``). The TBox is not
generated: it is ``univ-bench.owl`` from the data folder. Same seed, same triples.

    python bench/lubm_generator.py --universities 5 --out /tmp/lubm5.nt
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Iterator
from pathlib import Path

from rdflib import RDF, Literal, URIRef
from rdflib.term import Node

UB = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#"
UNIVERSITY_POOL = 1_000

Triple = tuple[Node, Node, Node]


def ub(name: str) -> URIRef:
    return URIRef(UB + name)


class _Department:
    """One department's triples, generated in the UBA order."""

    def __init__(self, rng: random.Random, university: int, number: int) -> None:
        self.rng = rng
        self.university = university
        self.base = f"http://www.Department{number}.University{university}.edu/"
        self.iri = URIRef(self.base[:-1])
        self.triples: list[Triple] = []

    def node(self, kind: str, index: int) -> URIRef:
        return URIRef(f"{self.base}{kind}{index}")

    def add(self, s: Node, p: str, o: Node) -> None:
        self.triples.append((s, RDF.type if p == "type" else ub(p), o))

    def person(self, iri: URIRef, kind: str, index: int) -> None:
        self.add(iri, "name", Literal(f"{kind}{index}"))
        host = self.base[len("http://www.") : -1]
        self.add(iri, "emailAddress", Literal(f"{kind}{index}@{host}"))
        self.add(iri, "telephone", Literal("xxx-xxx-xxxx"))

    def degree_from(self, iri: URIRef, degree: str) -> None:
        other = self.rng.randrange(UNIVERSITY_POOL)
        self.add(iri, degree, URIRef(f"http://www.University{other}.edu"))

    def build(self) -> list[Triple]:
        rng = self.rng
        self.add(self.iri, "type", ub("Department"))
        self.add(self.iri, "name", Literal(f"Department{self.base.split('Department')[1].split('.')[0]}"))
        self.add(self.iri, "subOrganizationOf", URIRef(f"http://www.University{self.university}.edu"))
        faculty: list[tuple[URIRef, str]] = []
        for kind, low, high in (("FullProfessor", 7, 10), ("AssociateProfessor", 10, 14),
                                ("AssistantProfessor", 8, 11), ("Lecturer", 5, 7)):  # fmt: skip
            faculty += [(self.node(kind, i), kind) for i in range(rng.randint(low, high))]
        courses, grad_courses = self._faculty(faculty)
        professors = [iri for iri, kind in faculty if kind != "Lecturer"]
        self._students(len(faculty), courses, grad_courses, professors)
        for i in range(rng.randint(10, 20)):
            group = self.node("ResearchGroup", i)
            self.add(group, "type", ub("ResearchGroup"))
            self.add(group, "subOrganizationOf", self.iri)
        return self.triples

    def _faculty(self, faculty: list[tuple[URIRef, str]]) -> tuple[list[URIRef], list[URIRef]]:
        rng = self.rng
        courses: list[URIRef] = []
        grad_courses: list[URIRef] = []
        publications = {"FullProfessor": (15, 20), "AssociateProfessor": (10, 18), "AssistantProfessor": (5, 10),
                        "Lecturer": (0, 5)}  # fmt: skip
        head = next(iri for iri, kind in faculty if kind == "FullProfessor")
        for iri, kind in faculty:
            number = int(str(iri).rsplit(kind, 1)[1])
            self.add(iri, "type", ub(kind))
            self.add(iri, "headOf" if iri == head else "worksFor", self.iri)
            self.person(iri, kind, number)
            for degree in ("undergraduateDegreeFrom", "mastersDegreeFrom", "doctoralDegreeFrom"):
                self.degree_from(iri, degree)
            if kind != "Lecturer":
                self.add(iri, "researchInterest", Literal(f"Research{rng.randrange(30)}"))
            self._teach(iri, "Course", courses)
            self._teach(iri, "GraduateCourse", grad_courses)
            for p in range(rng.randint(*publications[kind])):
                pub = URIRef(f"{iri}/Publication{p}")
                self.add(pub, "type", ub("Publication"))
                self.add(pub, "name", Literal(f"Publication{p}"))
                self.add(pub, "publicationAuthor", iri)
        return courses, grad_courses

    def _teach(self, teacher: URIRef, kind: str, taught: list[URIRef]) -> None:
        """One or two new courses of ``kind`` (Course, GraduateCourse) taught by ``teacher``, added to ``taught``."""
        for _ in range(self.rng.randint(1, 2)):
            course = self.node(kind, len(taught))
            taught.append(course)
            self.add(course, "type", ub(kind))
            self.add(course, "name", Literal(f"{kind}{len(taught) - 1}"))
            self.add(teacher, "teacherOf", course)

    def _students(self, faculty: int, courses: list[URIRef], grad: list[URIRef], professors: list[URIRef]) -> None:
        rng = self.rng
        for i in range(faculty * rng.randint(8, 14)):
            student = self.node("UndergraduateStudent", i)
            self.add(student, "type", ub("UndergraduateStudent"))
            self.add(student, "memberOf", self.iri)
            self.person(student, "UndergraduateStudent", i)
            for course in rng.sample(courses, min(len(courses), rng.randint(2, 4))):
                self.add(student, "takesCourse", course)
            if rng.randrange(5) == 0:
                self.add(student, "advisor", rng.choice(professors))
        ta_every, ra_every = rng.randint(4, 5), rng.randint(3, 4)
        for i in range(faculty * rng.randint(3, 4)):
            student = self.node("GraduateStudent", i)
            self.add(student, "type", ub("GraduateStudent"))
            self.add(student, "memberOf", self.iri)
            self.person(student, "GraduateStudent", i)
            self.degree_from(student, "undergraduateDegreeFrom")
            for course in rng.sample(grad, min(len(grad), rng.randint(1, 3))):
                self.add(student, "takesCourse", course)
            advisor = rng.choice(professors)
            self.add(student, "advisor", advisor)
            if i % ta_every == 0:
                self.add(student, "type", ub("TeachingAssistant"))
                self.add(student, "teachingAssistantOf", rng.choice(courses))
            if i % ra_every == 0:
                self.add(student, "type", ub("ResearchAssistant"))
            for p in range(rng.randint(0, 5)):
                pub = URIRef(f"{advisor}/Publication{100 + i * 10 + p}")
                self.add(pub, "type", ub("Publication"))
                self.add(pub, "publicationAuthor", student)
                self.add(pub, "publicationAuthor", advisor)


def generate(universities: int, *, seed: int = 0) -> Iterator[Triple]:
    """The instance triples of LUBM(``universities``), seeded."""
    rng = random.Random(seed)
    for university in range(universities):
        uni = URIRef(f"http://www.University{university}.edu")
        yield uni, RDF.type, ub("University")
        yield uni, ub("name"), Literal(f"University{university}")
        for number in range(rng.randint(15, 25)):
            yield from _Department(rng, university, number).build()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--universities", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True, help="N-Triples file to write")
    args = parser.parse_args()
    count = 0
    with args.out.open("w", encoding="utf-8") as out:
        for s, p, o in generate(args.universities, seed=args.seed):
            out.write(f"{s.n3()} {p.n3()} {o.n3()} .\n")
            count += 1
    print(f"{count} triples -> {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
