// axe-core's serious and critical violations on the page, one line each.
(async () => {
  const result = await axe.run(document, {resultTypes: ["violations"]});
  return result.violations
    .filter(v => v.impact === "serious" || v.impact === "critical")
    .map(v => `${v.id} (${v.impact}): ${v.help}: ` +
      v.nodes.slice(0, 3).map(n => n.target.join(" ") + " " + n.failureSummary.replace(/\s+/g, " ")).join(" | "));
})
