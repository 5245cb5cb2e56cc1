// The leaderboard's filter box: hides the rows whose text does not hold what is
// typed; kept across live.js swapping the page's <main> in place.
(function () {
  "use strict";
  let wanted = "";
  function apply() {
    const box = document.getElementById("board-filter");
    if (!box) return;
    if (box.value !== wanted) box.value = wanted;
    const needle = wanted.trim().toLowerCase();
    let shown = 0, total = 0;
    document.querySelectorAll(box.dataset.filter).forEach((row) => {
      const hit = !needle || row.textContent.toLowerCase().includes(needle);
      row.hidden = !hit;
      total += 1;
      shown += hit ? 1 : 0;
    });
    const count = document.getElementById("filter-count");
    if (count) count.textContent = needle ? `${shown} of ${total}` : "";
  }
  document.addEventListener("input", (event) => {
    if (event.target && event.target.id === "board-filter") {
      wanted = event.target.value;
      apply();
    }
  });
  document.addEventListener("arena:swapped", apply);
})();
