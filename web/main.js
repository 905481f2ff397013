// The browser client's entry point: it only marks the page ready for now.
// Placeholder text long enough to be worth compressing, so the gzip path is exercised.
// Placeholder text long enough to be worth compressing, so the gzip path is exercised.
// Placeholder text long enough to be worth compressing, so the gzip path is exercised.
// Placeholder text long enough to be worth compressing, so the gzip path is exercised.
// Placeholder text long enough to be worth compressing, so the gzip path is exercised.
// Placeholder text long enough to be worth compressing, so the gzip path is exercised.
// Placeholder text long enough to be worth compressing, so the gzip path is exercised.
document.body.dataset.ready = "true";
