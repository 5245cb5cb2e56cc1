/* The report's tables (sortable.js, beside its pages): a file, never an inline script,
   so that the pages hold none (the server's CSP allows none) and still open from file://. */
/* Click a column header to sort; pages read fine without this. */
document.querySelectorAll("table.sortable").forEach(function (table) {
  function key(cell) {
    var text = cell.dataset.sort !== undefined ? cell.dataset.sort : cell.textContent.trim();
    var number = parseFloat(text);
    return /^[-+]?\d/.test(text) && !isNaN(number) ? [0, number] : [1, text.toLowerCase()];
  }
  table.querySelectorAll("thead th").forEach(function (th, column) {
    th.tabIndex = 0;
    th.classList.add("sorter");
    function sort() {
      var body = table.tBodies[0], direction = th.dataset.dir === "asc" ? -1 : 1;
      table.querySelectorAll("thead th").forEach(function (other) { delete other.dataset.dir; });
      th.dataset.dir = direction === 1 ? "asc" : "desc";
      Array.from(body.rows).sort(function (a, b) {
        var x = key(a.cells[column]), y = key(b.cells[column]);
        if (x[0] !== y[0]) return x[0] - y[0];
        return (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0) * direction;
      }).forEach(function (row) { body.appendChild(row); });
    }
    th.addEventListener("click", sort);
    th.addEventListener("keydown", function (e) { if (e.key === "Enter") sort(); });
  });
});
/* A filter box above every filterable table: rows holding the text (any case) stay. */
document.querySelectorAll("table.filterable").forEach(function (table) {
  var box = document.createElement("input"), count = document.createElement("span");
  var holder = table.parentElement.classList.contains("scroll") ? table.parentElement : table;
  var rows = Array.from(table.tBodies[0] ? table.tBodies[0].rows : []);
  box.type = "search";
  box.className = "filter";
  box.placeholder = "Filter rows (a bot, a fault, ...)";
  box.setAttribute("aria-label", "Filter the table's rows");
  box.setAttribute("aria-controls", table.id);
  count.className = "filter-count";
  count.setAttribute("aria-live", "polite");
  var bar = document.createElement("div");
  bar.className = "filter-bar";
  bar.append(box, count);
  holder.parentElement.insertBefore(bar, holder);
  box.addEventListener("input", function () {
    var words = box.value.toLowerCase().split(/\s+/).filter(Boolean), shown = 0;
    rows.forEach(function (row) {
      // Cells joined by a space: a word never matches across two cells.
      var text = Array.from(row.cells, function (cell) {
        return cell.textContent.trim();
      }).join(" ").toLowerCase();
      row.hidden = !words.every(function (word) { return text.includes(word); });
      if (!row.hidden) shown++;
    });
    count.textContent = words.length ? shown + " of " + rows.length + " rows" : "";
  });
});
