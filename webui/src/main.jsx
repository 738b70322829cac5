import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { initI18n } from "./i18n.js";
import App from "./App.jsx";
import "./styles.css";

initI18n().then(() => {
  createRoot(document.getElementById("root")).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
});
