// decide serve: the memo follows the answers without a page load. Without this script the page
// is a plain form that posts back to itself, which the server answers with the same page.
'use strict';
(() => {
  const form = document.getElementById('questions');
  if (!form || !window.fetch || !window.DOMParser) return;
  const WAIT_MS = 350;
  let timer = 0;
  let sent = 0;
  const later = () => {
    clearTimeout(timer);
    timer = setTimeout(update, WAIT_MS);
  };
  form.addEventListener('input', later);
  form.addEventListener('change', (event) => {
    // Another language changes every word on the page: ask for the page again.
    if (event.target.name === '_lang') form.requestSubmit();
    else later();
  });
  // Where the memo follows the form (a narrow window), its frame is as tall as the memo: the
  // page scrolls, not a frame inside it. Beside the form (a wide window) it keeps the height the
  // style gives it, and scrolls on its own while the form stays in view.
  const frame = document.querySelector('#memo iframe');
  const beside = window.matchMedia('(min-width: 72rem)');
  const fit = () => {
    const memo = frame.contentDocument && frame.contentDocument.documentElement;
    if (beside.matches || !memo) {
      frame.style.height = '';
      return;
    }
    frame.style.height = '0px'; // so that the memo's height is its own, not the frame's
    const borders = frame.offsetHeight - frame.clientHeight;
    frame.style.height = `${memo.scrollHeight + borders}px`;
  };
  if (frame) {
    frame.addEventListener('load', fit);
    window.addEventListener('resize', fit);
    fit();
  }
  const file = document.getElementById('upload-file');
  if (file) file.addEventListener('change', () => file.files.length && file.form.requestSubmit());

  // The server's page for the answers as they are now; only what it changed is copied over, so
  // the field being typed in keeps its focus and its caret.
  async function update() {
    const mine = ++sent;
    let page;
    try {
      const response = await fetch(form.action, {
        method: 'POST',
        body: new URLSearchParams(new FormData(form)),
        headers: { 'X-Decide-Live': '1' },
      });
      page = new DOMParser().parseFromString(await response.text(), 'text/html');
    } catch (_) {
      return; // The server is gone; the button still posts the form.
    }
    if (mine !== sent) return; // A later answer is on its way.
    // Anything but the page (a refusal as JSON) leaves the page as it is; the button still
    // posts the form and shows why.
    if (!page.getElementById('profile-yaml')) return;
    for (const theirs of page.querySelectorAll('[data-q]')) {
      const ours = form.querySelector(`[data-q="${theirs.dataset.q}"]`);
      if (!ours) continue;
      ours.hidden = theirs.hidden;
      ours.disabled = theirs.disabled;
      copy(ours.querySelector('.msg'), theirs.querySelector('.msg'));
      for (const offer of theirs.querySelectorAll('[data-offer]')) {
        const same = ours.querySelector(`[data-offer="${CSS.escape(offer.dataset.offer)}"]`);
        if (same) same.hidden = offer.hidden;
      }
    }
    const pane = document.getElementById('memo');
    copy(pane.querySelector('.status'), page.querySelector('#memo .status'));
    const ourFrame = pane.querySelector('iframe');
    const theirFrame = page.querySelector('#memo iframe');
    // The memo is a page of the server's (its address names its content): loaded again only
    // when the answers changed it.
    const memo = theirFrame ? theirFrame.getAttribute('src') : '';
    if (memo && ourFrame.getAttribute('src') !== memo) ourFrame.setAttribute('src', memo);
    ourFrame.hidden = !memo;
    document.getElementById('profile-yaml').textContent = page.getElementById('profile-yaml').textContent;
    document.body.dataset.updated = String(mine);
  }

  function copy(ours, theirs) {
    if (ours && theirs) ours.replaceWith(document.importNode(theirs, true));
  }
})();
