// Live pages: polls /api/live; when something was stored since this page was
// drawn, fetches the page again and swaps its <main> in place (no reload).
(function () {
  "use strict";
  const SECONDS = 3;
  async function poll() {
    try {
      const reply = await fetch("/api/live", {credentials: "same-origin"});
      const live = await reply.json();
      if (String(live.stamp) !== document.body.dataset.stamp) {
        const page = await fetch(location.href, {credentials: "same-origin"});
        const html = new DOMParser().parseFromString(await page.text(), "text/html");
        const main = html.querySelector("main");
        if (page.ok && main) {
          document.querySelector("main").replaceWith(main);
          document.body.dataset.stamp = html.body.dataset.stamp || String(live.stamp);
          document.dispatchEvent(new Event("arena:swapped"));
        }
      }
    } catch (error) {
      // the server is away for a moment: try again at the next tick
    }
    setTimeout(poll, SECONDS * 1000);
  }
  setTimeout(poll, SECONDS * 1000);
})();
