// Where this web UI finds h123's API. Empty: the server that serves this page (`h123 serve`).
// Serving the UI from a static host or CDN instead? Set the probe server's base URL here, e.g.
// "https://probe.example", and start that server with `--cors-origin` naming this page's origin.
window.h123 = { api: "" };
