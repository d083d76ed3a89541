"""JUnit XML report: one test suite, one test case per finding; errors are failures."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence

from gpuspec.escaping import xml_line, xml_lines
from gpuspec.findings import Finding
from gpuspec.report.base import ReportContext


def _clean(text: str) -> str:
    return xml_line(text)


def _where(finding: Finding) -> str:
    if not finding.file:
        return "<fleet>"
    return f"{finding.file}:{finding.line or 1}:{finding.column or 1}"


def _details(finding: Finding) -> str:
    lines = [f"{_where(finding)}: {finding.severity.value} {finding.rule_id} {finding.message}"]
    if finding.spec_path:
        lines.append(f"spec path: {finding.spec_path}")
    if finding.hint:
        lines.append(f"hint: {finding.hint}")
    return xml_lines("\n".join(xml_line(line) for line in lines))


class JunitReporter:
    """Report as JUnit XML that CI systems render as test results."""

    def render(self, findings: Sequence[Finding], context: ReportContext) -> str:
        """Return the findings as a JUnit XML document."""
        failures = sum(1 for f in findings if f.severity.value == "error")
        suites = ET.Element("testsuites", name="gpuspec", tests=str(max(len(findings), 1)),
                            failures=str(failures), errors="0")
        suite = ET.SubElement(suites, "testsuite", name=f"gpuspec {context.command}",
                              tests=str(max(len(findings), 1)), failures=str(failures), errors="0", skipped="0")
        ET.SubElement(suite, "properties").append(
            ET.Element("property", name="gpuspec.version", value=context.tool_version))
        if not findings:
            ET.SubElement(suite, "testcase", classname=f"gpuspec.{context.command}", name="no problems found")
        for f in findings:
            doc = context.rule_docs.get(f.rule_id)
            classname = f"{f.rule_id}" + (f" {doc.title}" if doc else "")
            case = ET.SubElement(suite, "testcase", classname=_clean(classname),
                                 name=_clean(f"{_where(f)} {f.message}"), file=_clean(f.file or ""))
            if f.line:
                case.set("line", str(f.line))
            if f.severity.value == "error":
                failure = ET.SubElement(case, "failure", message=_clean(f.message), type=f.rule_id)
                failure.text = _details(f)
            else:
                out = ET.SubElement(case, "system-out")
                out.text = _details(f)
        ET.indent(suites)
        return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
