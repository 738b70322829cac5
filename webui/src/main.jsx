import { StrictMode, startTransition } from "react";
import { createRoot } from "react-dom/client";
import { initI18n } from "./i18n.js";
import App from "./App.jsx";
import "./styles.css";

// The first render is a transition: React renders the page in slices of a few
// milliseconds, yielding to the browser between them, instead of one long task that
// blocks input (Lighthouse's total blocking time on a phone).
initI18n().then(() => {
  startTransition(() => {
    createRoot(document.getElementById("root")).render(
      <StrictMode>
        <App />
      </StrictMode>,
    );
  });
});
