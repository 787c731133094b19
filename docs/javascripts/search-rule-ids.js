// Let the search box find a rule by its full id, as `safe-queue check` prints it
// ("safe-queue:no-dead-letter-queue"). The search engine (lunr) reads "word:" as a field
// name, so such a query finds nothing and logs a parse error. The theme sends each query
// to its search worker as {type, data: "<query>"}: a colon in the query becomes a space
// there, so the id's words are searched. What the reader typed is left as it is.
(function () {
  const post = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (message, ...rest) {
    if (message && typeof message.data === "string" && message.data.includes(":")) {
      message = { ...message, data: message.data.replace(/:/g, " ") };
    }
    return post.call(this, message, ...rest);
  };
})();
