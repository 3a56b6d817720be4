// The report's only script: filter the cell list and open a cell's drill-down. No network, no storage.
(function () {
  "use strict";
  var form = document.getElementById("filters");
  var rows = Array.prototype.slice.call(document.querySelectorAll("#cell-list tbody tr"));
  var shown = document.getElementById("shown");
  var viewer = document.getElementById("cell");
  var names = Array.prototype.map.call(form.querySelectorAll("select"), function (s) { return s.name; });

  function matches(row, name, value) {
    if (!value) { return true; }
    var have = row.getAttribute("data-" + name) || "";
    return (name === "check" || name === "decision") ? have.split(" ").indexOf(value) >= 0 : have === value;
  }

  function apply() {
    var count = 0;
    rows.forEach(function (row) {
      var keep = names.every(function (name) { return matches(row, name, form.elements[name].value); });
      row.hidden = !keep;
      if (keep) { count += 1; }
    });
    shown.textContent = count + " of " + rows.length + " cell(s)";
  }

  function setFilters(params) {
    names.forEach(function (name) {
      var select = form.elements[name];
      var value = params.get(name) || "";
      var known = Array.prototype.some.call(select.options, function (o) { return o.value === value; });
      if (!known) {  // a filter the table offers but no cell has: show it, and show that nothing matches
        var option = document.createElement("option");
        option.textContent = value;
        select.appendChild(option);
      }
      select.value = value;
    });
    apply();
  }

  function openCell(n) {
    var template = document.getElementById("t-" + n);
    if (!template) { return; }
    viewer.replaceChildren(template.content.cloneNode(true));
    viewer.hidden = false;
    viewer.scrollIntoView();
  }

  function route() {
    var hash = decodeURIComponent(location.hash || "");
    if (hash.indexOf("#cell-") === 0) {
      openCell(hash.slice(6));
    } else if (hash.indexOf("#cells?") === 0) {
      setFilters(new URLSearchParams(location.hash.slice(7)));
      document.getElementById("cells").scrollIntoView();
    }
  }

  form.addEventListener("change", apply);
  document.getElementById("clear").addEventListener("click", function () {
    setFilters(new URLSearchParams(""));
  });
  window.addEventListener("hashchange", route);
  apply();
  route();
}());
