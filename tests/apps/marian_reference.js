// Translates each line of stdin with Marian itself: the npm package
// @browsermt/bergamot-translator (browsermt/marian-dev compiled to WebAssembly), one sentence
// per call, greedy (in float32 unless MARIAN_GEMM_PRECISION names another, e.g. int8shiftAll).
// What the Marian export tests compare our output with. With MARIAN_WORD_SCORES=1 each output
// line is instead the translation's word scores, space-separated: Marian's log-probability of
// each word's pieces, averaged over the pieces (bergamot's quality scores without a QE model:
// src/translator/quality_estimator.cpp; </s> not counted), which the package returns only in
// its HTML output (x-bergamot-word-score), so the input is sent as HTML text. With
// MARIAN_SHORTLIST=FILE, Marian decodes over that binary lexical shortlist (lex.*.s2t.bin).
//   node marian_reference.js PACKAGE_DIR MODEL.bin SOURCE.spm [TARGET.spm] < input > output
// PACKAGE_DIR holds the package's worker/ folder. Exits 2 with a message when Marian refuses
// the model (a missing weight, a bad config), so that a test can show why.
'use strict';
const fs = require('fs');
const path = require('path');
const vm = require('vm');

const [packageDir, modelPath, sourceVocabulary, targetVocabulary] = process.argv.slice(2);
if (!packageDir || !modelPath || !sourceVocabulary) {
  console.error('usage: node marian_reference.js PACKAGE_DIR MODEL.bin SOURCE.spm [TARGET.spm] < input');
  process.exit(64);
}
const workerDir = path.join(packageDir, 'worker');
const wordScores = process.env.MARIAN_WORD_SCORES === '1';
const escapeHtml = (text) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
// Each word once: the HTML may wrap a word in more than one span (an empty one before it,
// where the output's markup was placed), all with its index.
const scoresIn = (html) => {
  const byWord = new Map();
  for (const match of html.matchAll(/x-bergamot-word-index="(\d+)" x-bergamot-word-score="([^"]*)"/g))
    if (!byWord.has(match[1])) byWord.set(match[1], match[2]);
  return [...byWord.values()].join(' ');
};

// The module's own fallback int8 GEMM functions, under the import names Marian expects
// (what the package's translator-worker.js does outside Firefox).
const GEMM_FALLBACKS = {
  int8_prepare_a: 'int8PrepareAFallback',
  int8_prepare_b: 'int8PrepareBFallback',
  int8_prepare_b_from_transposed: 'int8PrepareBFromTransposedFallback',
  int8_prepare_b_from_quantized_transposed: 'int8PrepareBFromQuantizedTransposedFallback',
  int8_prepare_bias: 'int8PrepareBiasFallback',
  int8_multiply_and_add_bias: 'int8MultiplyAndAddBiasFallback',
  int8_select_columns_of_b: 'int8SelectColumnsOfBFallback',
};

function loadMarian() {
  return new Promise((resolve, reject) => {
    const wasm = fs.readFileSync(path.join(workerDir, 'bergamot-translator-worker.wasm'));
    globalThis.Module = {
      print: () => {},
      printErr: (text) => process.stderr.write(`marian: ${text}\n`),
      instantiateWasm(info, accept) {
        const gemm = {};
        for (const [name, fallback] of Object.entries(GEMM_FALLBACKS))
          gemm[name] = (...args) => globalThis.Module.asm[fallback](...args);
        WebAssembly.instantiate(wasm, { ...info, wasm_gemm: gemm })
          .then(({ instance }) => accept(instance))
          .catch(reject);
        return {};
      },
      onRuntimeInitialized: () => resolve(globalThis.Module),
      onAbort: (what) => reject(new Error(`Marian aborted: ${what}`)),
    };
    vm.runInThisContext(fs.readFileSync(path.join(workerDir, 'bergamot-translator-worker.js'), 'utf8'));
  });
}

function alignedMemory(marian, file, alignment) {
  const bytes = fs.readFileSync(file);
  const memory = new marian.AlignedMemory(bytes.byteLength, alignment);
  memory.getByteArrayView().set(new Int8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  return memory;
}

async function main() {
  const marian = await loadMarian();
  const vocabularies = new marian.AlignedMemoryList();
  vocabularies.push_back(alignedMemory(marian, sourceVocabulary, 64));
  if (targetVocabulary && targetVocabulary !== sourceVocabulary)
    vocabularies.push_back(alignedMemory(marian, targetVocabulary, 64));
  // Greedy, in float32 unless MARIAN_GEMM_PRECISION says otherwise (int8shiftAll for an int8
  // model); every line one sentence; <unk> allowed, as our decoder allows it.
  const config = [
    'beam-size: 1', 'normalize: 0', 'word-penalty: 0', 'max-length-factor: 3', 'max-length-break: 128',
    'mini-batch-words: 1024', 'workspace: 128', 'cpu-threads: 0',
    `gemm-precision: ${process.env.MARIAN_GEMM_PRECISION || 'float32'}`,
    `skip-cost: ${wordScores ? 'false' : 'true'}`, 'quiet: true', 'quiet-translation: true', 'alignment: soft', 'allow-unk: true',
    'ssplit-mode: sentence',
  ].join('\n');
  const shortlist = process.env.MARIAN_SHORTLIST ? alignedMemory(marian, process.env.MARIAN_SHORTLIST, 64) : null;
  const model = new marian.TranslationModel(config, alignedMemory(marian, modelPath, 256), shortlist, vocabularies, null);
  const service = new marian.BlockingService({ cacheSize: 0 });
  const lines = fs.readFileSync(0, 'utf8').split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  const out = [];
  for (const line of lines) {
    const input = new marian.VectorString();
    input.push_back(wordScores ? escapeHtml(line) : line);
    const options = new marian.VectorResponseOptions();
    options.push_back({ alignment: false, html: wordScores, qualityScores: wordScores });
    const responses = service.translate(model, input, options);
    const text = responses.get(0).getTranslatedText();
    out.push(wordScores ? scoresIn(text) : text);
    responses.delete();
    input.delete();
    options.delete();
  }
  process.stdout.write(out.map((line) => line + '\n').join(''));
}

main().catch((error) => {
  console.error(`marian_reference.js: ${error.message || error}`);
  process.exit(2);
});
