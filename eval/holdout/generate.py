#!/usr/bin/env python3
"""Holdout retrieval evaluation set for SOLARIA Memory search.

Writes eval/holdout/corpus.jsonl and eval/holdout/queries.jsonl. Python 3 standard library
only, fixed seed, deterministic. Refuses to write anything if a check fails.

Written independently of eval/ (other projects, other facts, other queries); it only reuses
the text checkers (norm, words, stem, STOPWORDS, rec_text) of eval/generate.py, imported.

Run from the repository root:  python3 eval/holdout/generate.py
"""
import importlib.util
import json
import os
import re
import sys
from collections import Counter
from random import Random

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("eval_generate", os.path.join(HERE, "..", "generate.py"))
_base = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_base)
norm, words, stem, STOPWORDS, rec_text = _base.norm, _base.words, _base.stem, _base.STOPWORDS, _base.rec_text

SEED = 77031
MIN_PER_KIND = {"exact_identifier": 30, "keyword": 25, "paraphrase": 45, "paraphrase_es": 20,
                "cross_language": 40}
MIN_CROSS_EACH_WAY = 20
DAY = 24 * 60

# ============================================================================
# Record constructors (shapes follow the capture hook's titles)
# ============================================================================


def B(cmd, out):
    return dict(kind="tool_use", tool_name="Bash", title="Bash: " + cmd.split("\n")[0], input=cmd,
                response=out)


def E(path, old, new):
    lines = [path] + ["- " + l for l in old.split("\n")] + ["+ " + l for l in new.split("\n")]
    return dict(kind="tool_use", tool_name="Edit", title="Edit " + path, input="\n".join(lines),
                response="The file %s has been updated successfully." % path)


def R(path, content):
    return dict(kind="tool_use", tool_name="Read", title="Read " + path, input=path, response=content)


def W(path, content):
    return dict(kind="tool_use", tool_name="Write", title="Write " + path, input=path + "\n" + content,
                response="File created successfully at: " + path)


def G(pattern, path, out):
    return dict(kind="tool_use", tool_name="Grep", title='Grep "%s" in %s' % (pattern, path),
                input="%s in %s" % (pattern, path), response=out)


def _first_line(text):
    line = text.strip().split("\n")[0]
    return line if len(line) <= 120 else line[:117] + "..."


def P(text):
    return dict(kind="prompt", tool_name=None, title=_first_line(text), input=text, response="")


def N(text):
    return dict(kind="note", tool_name=None, title=_first_line(text), input=text, response="")


# ============================================================================
# Noise: per-project templates. @@name@@ placeholders are filled at random.
# ============================================================================

GIT = [
    ("git status", "On branch @@branch@@\nYour branch is up to date with 'origin/@@branch@@'.\n\n"
     "Changes not staged for commit:\n  (use \"git add <file>...\" to update what will be committed)\n"
     "\tmodified:   @@file@@\n\nno changes added to commit (use \"git add\" and/or \"git commit -a\")"),
    ("git log --oneline -5", "@@sha@@ fix flaky test in @@test@@\n@@sha@@ update config for staging\n"
     "@@sha@@ build: bump dependencies\n@@sha@@ refactor @@file@@\n@@sha@@ Merge pull request #@@n@@ from team/@@branch@@"),
    ("git diff --stat", " @@file@@ | @@k@@ ++++++----\n 1 file changed, @@k@@ insertions(+), @@m@@ deletions(-)"),
    ("git pull --rebase", "Successfully rebased and updated refs/heads/@@branch@@."),
    ("git checkout -b @@branch@@", "Switched to a new branch '@@branch@@'"),
    ("git stash", "Saved working directory and index state WIP on @@branch@@: @@sha@@ update config"),
    ("git push -u origin @@branch@@", "To github.com:acme/@@project@@.git\n * [new branch]      @@branch@@ -> @@branch@@\n"
     "branch '@@branch@@' set up to track 'origin/@@branch@@'."),
]

PROMPTS_EN = [
    "run the tests again", "fix the lint errors in @@file@@", "update the config for staging",
    "why is the build failing now?", "commit these changes with a short message",
    "add a test for @@file@@", "what does @@file@@ do?", "bump the dependencies to the latest patch versions",
    "remove the debug logging", "refactor @@file@@ so it is easier to read", "rerun only @@test@@",
    "check the CI error and fix it", "can you clean up the imports in @@file@@", "rebase on main and rerun the build",
    "the test @@test@@ is failing locally, take a look", "rename the variable to something clearer",
    "add a TODO for the error handling we skipped", "format the code before committing",
    "show me the recent commits", "open a PR for this branch",
]
PROMPTS_ES = [
    "ejecuta los tests otra vez", "arregla los errores de lint en @@file@@", "actualiza la config de staging",
    "¿por qué falla el build ahora?", "haz commit de los cambios con un mensaje corto",
    "añade un test para @@file@@", "¿qué hace @@file@@?", "sube las dependencias a la última versión de parche",
    "quita los logs de depuración", "refactoriza @@file@@ para que se lea mejor", "vuelve a lanzar solo @@test@@",
    "mira el error de CI y arréglalo", "limpia los imports de @@file@@", "haz rebase sobre main y relanza el build",
    "el test @@test@@ falla en local, échale un vistazo", "formatea el código antes del commit",
]
NOTES_EN = [
    "build green again after rebasing on main", "@@test@@ is slow (~@@secs@@s), maybe split it later",
    "lint fixed, CI should pass now", "left a TODO in @@file@@ about error handling",
    "updated the config; staging needs a redeploy", "tests pass locally, waiting for CI",
    "reverted the last change, it broke the build", "dependency bump done, no API changes",
]
NOTES_ES = [
    "build en verde otra vez tras el rebase", "@@test@@ tarda bastante (~@@secs@@s), habría que partirlo",
    "lint arreglado, CI debería pasar", "dejé un TODO en @@file@@ sobre el manejo de errores",
    "config actualizada; hay que redesplegar staging", "los tests pasan en local, esperando a CI",
    "revertí el último cambio, rompía el build",
]

PROJECTS = {}

PROJECTS["inventory-svc"] = dict(
    files=["src/main/java/com/acme/inventory/StockService.java",
           "src/main/java/com/acme/inventory/WarehouseController.java",
           "src/main/java/com/acme/inventory/SkuRepository.java",
           "src/main/java/com/acme/inventory/SupplierClient.java",
           "src/main/resources/application.yml", "build.gradle.kts",
           "src/test/java/com/acme/inventory/StockServiceTest.java"],
    tests=["StockServiceTest", "WarehouseControllerTest", "SkuRepositoryTest", "SupplierClientTest",
           "TransferServiceTest"],
    bash=[
        ("./gradlew build", "> Task :compileJava\n> Task :processResources\n> Task :classes\n> Task :test\n"
         "> Task :bootJar\n> Task :build\n\nBUILD SUCCESSFUL in @@secs@@s\n@@n@@ actionable tasks: @@k@@ executed, @@m@@ up-to-date"),
        ("./gradlew test", "> Task :test\n\n@@test@@ > returnsEmptyListWhenNoStock() PASSED\n"
         "@@test@@ > updatesQuantity() PASSED\n\nBUILD SUCCESSFUL in @@secs@@s\n@@n@@ tests completed"),
        ("./gradlew test --tests '*@@test@@'", "> Task :test\n\n@@test@@ > handlesMissingSku() FAILED\n"
         "    org.opentest4j.AssertionFailedError: expected: <@@k@@> but was: <@@m@@>\n\n"
         "@@n@@ tests completed, 1 failed\n\nFAILURE: Build failed with an exception.\n\n* What went wrong:\n"
         "Execution failed for task ':test'.\n> There were failing tests. See the report at: file:///home/dev/inventory-svc/build/reports/tests/test/index.html"),
        ("./gradlew spotlessApply", "> Task :spotlessJava\n> Task :spotlessApply\n\nBUILD SUCCESSFUL in @@secs@@s"),
        ("./gradlew spotlessCheck", "> Task :spotlessJava FAILED\n\nFAILURE: Build failed with an exception.\n\n"
         "* What went wrong:\nExecution failed for task ':spotlessJavaCheck'.\n> The following files had format violations:\n"
         "      @@file@@\n  Run './gradlew :spotlessApply' to fix these violations."),
        ("./gradlew compileJava", "> Task :compileJava FAILED\n@@file@@:@@line@@: error: cannot find symbol\n"
         "        return repository.findBySku(sku);\n                         ^\n  symbol:   method findBySku(String)\n1 error\n\n"
         "FAILURE: Build failed with an exception."),
        ("./gradlew dependencies --configuration runtimeClasspath | head -20",
         "runtimeClasspath - Runtime classpath of source set 'main'.\n+--- org.springframework.boot:spring-boot-starter-web -> 3.2.@@k@@\n"
         "+--- org.springframework.boot:spring-boot-starter-data-jpa -> 3.2.@@k@@\n+--- org.postgresql:postgresql:42.7.@@k@@"),
        ("docker compose up -d postgres", "[+] Running 2/2\n ✔ Network inventory-svc_default  Created\n ✔ Container inventory-svc-postgres-1  Started"),
        ("curl -s localhost:8080/actuator/health", '{"status":"UP","components":{"db":{"status":"UP"},"diskSpace":{"status":"UP"}}}'),
        ("./gradlew bootRun", "  .   ____          _            __ _ _\n :: Spring Boot ::                (v3.2.@@k@@)\n\n"
         "INFO 4242 --- [main] c.a.inventory.InventoryApplication : Started InventoryApplication in @@secs@@.4 seconds"),
    ],
    reads={
        "src/main/resources/application.yml": "spring:\n  datasource:\n    url: jdbc:postgresql://localhost:5432/inventory\n"
        "    username: inventory\n  jpa:\n    hibernate:\n      ddl-auto: validate\nserver:\n  port: 8080\nlogging:\n  level:\n    com.acme: INFO",
        "build.gradle.kts": "plugins {\n    java\n    id(\"org.springframework.boot\") version \"3.2.4\"\n"
        "    id(\"com.diffplug.spotless\") version \"6.25.0\"\n}\n\njava { toolchain { languageVersion.set(JavaLanguageVersion.of(17)) } }\n\n"
        "dependencies {\n    implementation(\"org.springframework.boot:spring-boot-starter-web\")\n"
        "    implementation(\"org.springframework.boot:spring-boot-starter-data-jpa\")\n    testImplementation(\"org.springframework.boot:spring-boot-starter-test\")\n}",
        "src/main/java/com/acme/inventory/StockService.java": "@Service\npublic class StockService {\n"
        "    private final SkuRepository repository;\n\n    public StockService(SkuRepository repository) {\n        this.repository = repository;\n    }\n\n"
        "    public List<StockLevel> levels(String warehouse) {\n        return repository.findByWarehouse(warehouse);\n    }\n}",
        "src/main/java/com/acme/inventory/WarehouseController.java": "@RestController\n@RequestMapping(\"/api/warehouses\")\n"
        "public class WarehouseController {\n    @GetMapping(\"/{code}/levels\")\n    public List<StockLevel> levels(@PathVariable String code) {\n"
        "        return stockService.levels(code);\n    }\n}",
    },
    edits=[
        ("src/main/resources/application.yml", "      connection-timeout: @@n@@00", "      connection-timeout: @@k@@000"),
        ("src/main/java/com/acme/inventory/StockService.java", "    private static final int PAGE_SIZE = @@k@@0;", "    private static final int PAGE_SIZE = @@m@@0;"),
        ("src/main/java/com/acme/inventory/StockService.java", "import java.util.*;", "import java.util.List;\nimport java.util.Optional;"),
        ("src/main/java/com/acme/inventory/WarehouseController.java", "    // TODO: error handling", "    // TODO(inventory): map errors to 404"),
        ("src/main/resources/application.yml", "    com.acme: DEBUG", "    com.acme: INFO"),
        ("build.gradle.kts", "    id(\"com.diffplug.spotless\") version \"6.23.3\"", "    id(\"com.diffplug.spotless\") version \"6.25.0\""),
        ("src/test/java/com/acme/inventory/StockServiceTest.java", "    void test1() {", "    void returnsEmptyListWhenNoStock() {"),
    ],
    greps=[
        ("@Transactional", "src/main/java", "src/main/java/com/acme/inventory/StockService.java:41:    @Transactional\n"
         "src/main/java/com/acme/inventory/TransferService.java:28:    @Transactional"),
        ("TODO", "src", "src/main/java/com/acme/inventory/WarehouseController.java:22:    // TODO: error handling\n"
         "src/main/java/com/acme/inventory/SupplierClient.java:57:    // TODO retry on 503"),
        ("findByWarehouse", "src", "src/main/java/com/acme/inventory/SkuRepository.java:14:    List<StockLevel> findByWarehouse(String code);\n"
         "src/main/java/com/acme/inventory/StockService.java:19:        return repository.findByWarehouse(warehouse);"),
    ],
)

PROJECTS["recsys-api"] = dict(
    files=["app/main.py", "app/routers/recommend.py", "app/models/two_tower.py", "app/deps.py",
           "training/train.py", "training/dataset.py", "pyproject.toml", "tests/test_recommend.py"],
    tests=["test_recommend_returns_k_items", "test_health", "test_dataset_len", "test_two_tower_forward",
           "test_unknown_user_fallback"],
    bash=[
        ("poetry run pytest -q", "........................................ [ 80%]\n..........     [100%]\n@@n@@ passed, 2 warnings in @@secs@@.21s"),
        ("poetry run pytest -q -k @@test@@", "F\n=================================== FAILURES ===================================\n"
         "____________________ @@test@@ ____________________\n\n    assert response.status_code == 200\nE   assert 422 == 200\n\n"
         "tests/test_recommend.py:@@line@@: AssertionError\n========================= short test summary info ==========================\n"
         "FAILED tests/test_recommend.py::@@test@@ - assert 422 == 200\n1 failed in @@secs@@.02s"),
        ("poetry run ruff check .", "@@file@@:@@line@@:1: F401 [*] `typing.Optional` imported but unused\nFound 1 error.\n[*] 1 fixable with the `--fix` option."),
        ("poetry run ruff check . --fix", "Found 1 error (1 fixed, 0 remaining)."),
        ("poetry run mypy app", "Success: no issues found in @@n@@ source files"),
        ("poetry run mypy app", "@@file@@:@@line@@: error: Incompatible return value type (got \"list[int] | None\", expected \"list[int]\")  [return-value]\n"
         "Found 1 error in 1 file (checked @@n@@ source files)"),
        ("uvicorn app.main:app --reload --port 8000", "INFO:     Will watch for changes in these directories: ['/home/dev/recsys-api']\n"
         "INFO:     Uvicorn running on http://127.0.0.1:8000 (Press CTRL+C to quit)\nINFO:     Application startup complete."),
        ("python -m training.train --epochs 2 --batch-size 256", "epoch 1/2  train_loss=0.@@k@@1  val_recall@20=0.2@@k@@\n"
         "epoch 2/2  train_loss=0.@@m@@4  val_recall@20=0.3@@m@@\nsaved checkpoint to checkpoints/two_tower_@@sha@@.pt"),
        ("nvidia-smi --query-gpu=memory.used,memory.total --format=csv", "memory.used [MiB], memory.total [MiB]\n@@n@@3 MiB, 24564 MiB"),
        ("poetry add --group dev pytest-asyncio", "Using version ^0.23.@@k@@ for pytest-asyncio\n\nUpdating dependencies\nResolving dependencies... (1.@@k@@s)\n\nWriting lock file"),
        ("curl -s localhost:8000/health", '{"status":"ok","model_version":"@@sha@@"}'),
    ],
    reads={
        "app/main.py": "from fastapi import FastAPI\n\nfrom app.routers import recommend, health\n\napp = FastAPI(title=\"recsys-api\")\n"
        "app.include_router(health.router)\napp.include_router(recommend.router, prefix=\"/v1\")\n",
        "pyproject.toml": "[tool.poetry]\nname = \"recsys-api\"\nversion = \"0.9.0\"\n\n[tool.poetry.dependencies]\npython = \"^3.11\"\n"
        "fastapi = \"^0.110\"\ntorch = \"2.2.1\"\nnumpy = \"^1.26\"\n\n[tool.ruff]\nline-length = 100\n",
        "training/dataset.py": "class InteractionDataset(Dataset):\n    def __init__(self, frame):\n        self.users = torch.tensor(frame.user_idx.values)\n"
        "        self.items = torch.tensor(frame.item_idx.values)\n\n    def __len__(self):\n        return len(self.users)\n\n"
        "    def __getitem__(self, i):\n        return self.users[i], self.items[i]\n",
        "tests/test_recommend.py": "def test_recommend_returns_k_items(client):\n    r = client.get(\"/v1/recommend/u1?k=5\")\n"
        "    assert r.status_code == 200\n    assert len(r.json()[\"items\"]) == 5\n",
    },
    edits=[
        ("app/config.py", "    top_k: int = @@k@@0", "    top_k: int = @@m@@0"),
        ("training/train.py", "LR = @@k@@e-4", "LR = @@m@@e-4"),
        ("app/routers/recommend.py", "from typing import List, Optional", "from typing import List"),
        ("training/train.py", "    print(f\"epoch {epoch} loss {loss}\")", "    log.info(\"epoch %d loss %.4f\", epoch, loss)"),
        ("pyproject.toml", "fastapi = \"^0.109\"", "fastapi = \"^0.110\""),
        ("tests/test_recommend.py", "    assert len(r.json()[\"items\"]) == 10", "    assert len(r.json()[\"items\"]) == 5"),
        ("app/deps.py", "def get_settings():", "@lru_cache\ndef get_settings():"),
    ],
    greps=[
        ("def recommend", "app", "app/routers/recommend.py:21:async def recommend(user_id: str, k: int = 10):"),
        ("TODO", "app training", "training/train.py:88:    # TODO: early stopping\napp/routers/recommend.py:40:    # TODO: cache popular items"),
        ("import torch", ".", "app/models/two_tower.py:1:import torch\ntraining/train.py:3:import torch\ntraining/dataset.py:2:import torch"),
    ],
)

PROJECTS["trailmate-ios"] = dict(
    files=["TrailMate/Views/TrailListView.swift", "TrailMate/Views/MapView.swift", "TrailMate/Models/Trail.swift",
           "TrailMate/Services/LocationService.swift", "TrailMate/Services/APIClient.swift",
           "TrailMate/Persistence/CoreDataStack.swift", "TrailMateTests/TrailParserTests.swift"],
    tests=["TrailParserTests", "APIClientTests", "DistanceFormatterTests", "TrailListViewModelTests"],
    bash=[
        ("xcodebuild -scheme TrailMate -destination 'platform=iOS Simulator,name=iPhone 15' build",
         "CompileSwift normal arm64 /Users/dev/trailmate-ios/@@file@@\nLd /Users/dev/Library/Developer/Xcode/DerivedData/TrailMate/Build/Products/Debug-iphonesimulator/TrailMate.app/TrailMate\n\n** BUILD SUCCEEDED ** [@@secs@@.3 sec]"),
        ("xcodebuild test -scheme TrailMate -destination 'platform=iOS Simulator,name=iPhone 15'",
         "Test Suite '@@test@@' started.\nTest Case '-[TrailMateTests.@@test@@ testParsesElevation]' passed (0.0@@k@@ seconds).\n"
         "Test Case '-[TrailMateTests.@@test@@ testEmptyInput]' passed (0.00@@k@@ seconds).\n\nExecuted @@n@@ tests, with 0 failures (0 unexpected) in @@secs@@.1 seconds\n** TEST SUCCEEDED **"),
        ("xcodebuild test -scheme TrailMate -destination 'platform=iOS Simulator,name=iPhone 15' -only-testing:TrailMateTests/@@test@@",
         "Test Case '-[TrailMateTests.@@test@@ testFormatsKilometres]' started.\n/Users/dev/trailmate-ios/TrailMateTests/@@test@@.swift:@@line@@: error: -[TrailMateTests.@@test@@ testFormatsKilometres] : XCTAssertEqual failed: (\"1,2 km\") is not equal to (\"1.2 km\")\n"
         "Test Case '-[TrailMateTests.@@test@@ testFormatsKilometres]' failed (0.0@@k@@ seconds).\n** TEST FAILED **"),
        ("swiftlint", "Linting Swift files in current working directory\n/Users/dev/trailmate-ios/@@file@@:@@line@@:1: warning: Line Length Violation: Line should be 120 characters or less; currently it has 13@@k@@ characters (line_length)\nDone linting! Found 1 violation, 0 serious in @@n@@ files."),
        ("swiftlint --fix", "Correcting Swift files in current working directory\nDone correcting @@n@@ files!"),
        ("swift package resolve", "Fetching https://github.com/pointfreeco/swift-snapshot-testing\nComputing version for swift-snapshot-testing\nComputed swift-snapshot-testing at 1.15.@@k@@ (0.@@k@@s)"),
        ("xcrun simctl list devices booted", "== Devices ==\n-- iOS 17.4 --\n    iPhone 15 (8C3E6D2A-@@sha@@) (Booted)"),
        ("xcodebuild -scheme TrailMate build 2>&1 | grep error:", "/Users/dev/trailmate-ios/@@file@@:@@line@@:17: error: cannot find 'trailStore' in scope"),
    ],
    reads={
        "TrailMate/Models/Trail.swift": "struct Trail: Codable, Identifiable {\n    let id: UUID\n    let name: String\n"
        "    let distanceMeters: Double\n    let difficulty: Difficulty\n}\n",
        "TrailMate/Services/APIClient.swift": "final class APIClient {\n    private let session: URLSession\n    private let baseURL = URL(string: \"https://api.trailmate.app\")!\n\n"
        "    func trails() async throws -> [Trail] {\n        let (data, _) = try await session.data(from: baseURL.appending(path: \"trails\"))\n"
        "        return try JSONDecoder().decode([Trail].self, from: data)\n    }\n}\n",
        "TrailMate/Views/TrailListView.swift": "struct TrailListView: View {\n    @StateObject var model = TrailListViewModel()\n\n"
        "    var body: some View {\n        List(model.trails) { trail in\n            TrailRow(trail: trail)\n        }\n        .task { await model.load() }\n    }\n}\n",
    },
    edits=[
        ("TrailMate/Views/MapView.swift", "        .padding(@@k@@)", "        .padding(@@m@@)"),
        ("TrailMate/Services/APIClient.swift", "        request.timeoutInterval = @@n@@", "        request.timeoutInterval = @@k@@0"),
        ("TrailMate/Views/TrailListView.swift", "            TrailRow(trail: trail)", "            TrailRow(trail: trail)\n                .listRowSeparator(.hidden)"),
        ("TrailMate/Models/Trail.swift", "    let distance: Double", "    let distanceMeters: Double"),
        ("TrailMate/Services/APIClient.swift", "    private let baseURL = URL(string: \"http://localhost:3000\")!", "    private let baseURL = URL(string: \"https://api.trailmate.app\")!"),
        ("TrailMateTests/TrailParserTests.swift", "    func test1() {", "    func testParsesElevation() {"),
    ],
    greps=[
        ("@Published", "TrailMate", "TrailMate/ViewModels/TrailListViewModel.swift:9:    @Published var trails: [Trail] = []\n"
         "TrailMate/ViewModels/TrailListViewModel.swift:10:    @Published var isLoading = false"),
        ("TODO", "TrailMate", "TrailMate/Views/MapView.swift:44:    // TODO: cluster annotations\nTrailMate/Services/APIClient.swift:31:    // TODO: retry"),
        ("JSONDecoder()", "TrailMate", "TrailMate/Services/APIClient.swift:12:        return try JSONDecoder().decode([Trail].self, from: data)"),
    ],
)

PROJECTS["shop-laravel"] = dict(
    files=["app/Http/Controllers/CheckoutController.php", "app/Http/Controllers/ProductController.php",
           "app/Models/Order.php", "app/Models/Product.php", "routes/web.php", "config/app.php",
           "tests/Feature/CheckoutTest.php"],
    tests=["CheckoutTest", "ProductListingTest", "CartTest", "CouponTest", "OrderHistoryTest"],
    bash=[
        ("php artisan test", "   PASS  Tests\\Unit\\PriceFormatterTest\n  ✓ formats euros\n\n   PASS  Tests\\Feature\\@@test@@\n"
         "  ✓ guest can view page\n  ✓ user can submit form\n\n  Tests:    @@n@@ passed (@@m@@ assertions)\n  Duration: @@secs@@.12s"),
        ("php artisan test --filter=@@test@@", "   FAIL  Tests\\Feature\\@@test@@\n  ⨯ user can submit form\n\n"
         "  ─────────────────────────────────────────────\n   FAILED  Tests\\Feature\\@@test@@ > user can submit form\n"
         "  Expected response status code [200] but received 500.\n\n  Tests:    1 failed, @@k@@ passed (@@m@@ assertions)"),
        ("composer install", "Installing dependencies from lock file (including require-dev)\nVerifying lock file contents can be installed on current platform.\n"
         "Nothing to install, update or remove\nGenerating optimized autoload files\n> @php artisan package:discover --ansi\n\n   INFO  Discovering packages."),
        ("./vendor/bin/phpstan analyse", " @@n@@/@@n@@ [▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓] 100%\n\n [OK] No errors"),
        ("./vendor/bin/phpstan analyse", " ------ ------------------------------------------------------\n  Line   @@file@@\n"
         " ------ ------------------------------------------------------\n  @@line@@     Method App\\Models\\Product::price() should return float but returns int|null.\n"
         " ------ ------------------------------------------------------\n\n [ERROR] Found 1 error"),
        ("php artisan migrate", "   INFO  Running migrations.\n\n  2024_0@@k@@_1@@m@@_000000_add_sku_to_products ........ @@ms@@ms DONE"),
        ("php artisan route:list --path=api", "  GET|HEAD  api/products ........ ProductController@index\n  POST      api/cart ........ CartController@store\n\n  Showing [@@n@@] routes"),
        ("npm run build", "> build\n> vite build\n\nvite v5.1.@@k@@ building for production...\n✓ @@n@@ modules transformed.\npublic/build/manifest.json  0.3@@k@@ kB\n✓ built in @@secs@@.2s"),
        ("php artisan tinker --execute='echo App\\Models\\Order::count();'", "@@n@@@@k@@"),
    ],
    reads={
        "routes/web.php": "<?php\n\nuse App\\Http\\Controllers\\CheckoutController;\nuse App\\Http\\Controllers\\ProductController;\n\n"
        "Route::get('/', [ProductController::class, 'index']);\nRoute::post('/checkout', [CheckoutController::class, 'store'])->middleware('auth');\n",
        "app/Models/Product.php": "<?php\n\nnamespace App\\Models;\n\nclass Product extends Model\n{\n    use HasFactory;\n\n"
        "    protected $casts = ['price' => 'decimal:2'];\n\n    public function variants()\n    {\n        return $this->hasMany(Variant::class);\n    }\n}\n",
        "tests/Feature/CheckoutTest.php": "<?php\n\nit('lets a user check out', function () {\n    $user = User::factory()->create();\n"
        "    $this->actingAs($user)->post('/checkout', ['cart_id' => 1])->assertRedirect('/orders');\n});\n",
    },
    edits=[
        ("config/app.php", "    'per_page' => @@k@@0,", "    'per_page' => @@m@@0,"),
        ("app/Http/Controllers/ProductController.php", "        ->paginate(@@k@@0);", "        ->paginate(@@m@@0);"),
        ("app/Http/Controllers/ProductController.php", "        $products = Product::all();", "        $products = Product::paginate(24);"),
        ("config/app.php", "    'timezone' => 'UTC',", "    'timezone' => 'Europe/Madrid',"),
        ("tests/Feature/CheckoutTest.php", "->assertStatus(302);", "->assertRedirect('/orders');"),
        ("routes/web.php", "Route::post('/checkout', [CheckoutController::class, 'store']);",
         "Route::post('/checkout', [CheckoutController::class, 'store'])->middleware('auth');"),
    ],
    greps=[
        ("DB::transaction", "app", "app/Http/Controllers/CheckoutController.php:34:        DB::transaction(function () use ($cart) {\n"
         "app/Services/RefundService.php:19:        return DB::transaction(fn () => $this->apply($order));"),
        ("TODO", "app", "app/Models/Order.php:51:    // TODO: soft deletes?\napp/Http/Controllers/ProductController.php:12:    // TODO: filters"),
        ("env(", "app", "app/Services/ShippingRates.php:8:        $this->zone = config('shipping.zone');"),
    ],
)

PROJECTS["chat-phx"] = dict(
    files=["lib/chat/rooms.ex", "lib/chat/messages.ex", "lib/chat_web/channels/room_channel.ex",
           "lib/chat_web/live/room_live.ex", "config/config.exs", "mix.exs", "test/chat/rooms_test.exs"],
    tests=["test/chat/rooms_test.exs", "test/chat/messages_test.exs", "test/chat_web/channels/room_channel_test.exs",
           "test/chat_web/live/room_live_test.exs"],
    bash=[
        ("mix test", "Compiling @@k@@ files (.ex)\n...........................................\nFinished in @@secs@@.3 seconds (0.8s async, 1.2s sync)\n@@n@@ tests, 0 failures\n\nRandomized with seed @@n@@@@k@@"),
        ("mix test @@test@@", "  1) test create_room/1 with valid data creates a room (Chat.RoomsTest)\n     @@test@@:@@line@@\n"
         "     match (=) failed\n     code:  assert {:ok, %Room{} = room} = Rooms.create_room(@valid_attrs)\n     left:  {:ok, %Room{} = room}\n"
         "     right: {:error, #Ecto.Changeset<action: :insert, changes: %{}, errors: [name: {\"can't be blank\", [validation: :required]}]>}\n\n"
         "Finished in 0.@@k@@ seconds\n@@n@@ tests, 1 failure"),
        ("mix format --check-formatted", "** (Mix) mix format failed due to --check-formatted.\nThe following files are not formatted:\n\n  * @@file@@"),
        ("mix format", ""),
        ("mix credo --strict", "Checking @@n@@ source files ...\n\n  Code Readability\n┃\n┃ [R] → Modules should have a @moduledoc tag.\n┃       @@file@@:1:11 #(Chat.Rooms)\n\n"
         "Please report incorrect results: https://github.com/rrrene/credo/issues\n\nAnalysis took 0.@@k@@ seconds\n@@n@@ mods/funs, found 1 code readability issue."),
        ("mix compile --warnings-as-errors", "Compiling @@k@@ files (.ex)\nwarning: variable \"socket\" is unused (if the variable is not meant to be used, prefix it with an underscore)\n"
         "  @@file@@:@@line@@\n\nCompilation failed due to warnings while using the --warnings-as-errors option"),
        ("mix ecto.migrate", "@@secs@@:1@@k@@:0@@m@@.412 [info] == Running 2024031@@k@@120000 Chat.Repo.Migrations.AddReadAtToMessages.change/0 forward\n"
         "@@secs@@:1@@k@@:0@@m@@.415 [info] alter table messages\n@@secs@@:1@@k@@:0@@m@@.420 [info] == Migrated in 0.0s"),
        ("mix deps.get", "Resolving Hex dependencies...\nResolution completed in 0.@@k@@s\nUnchanged:\n  phoenix 1.7.@@k@@\n  phoenix_live_view 0.20.@@m@@\n  ecto_sql 3.11.@@k@@\nAll dependencies are up to date"),
        ("mix hex.outdated", "Dependency          Current  Latest  Status\nphoenix             1.7.10   1.7.12  Update possible\njason               1.4.1    1.4.1   Up-to-date"),
    ],
    reads={
        "lib/chat/rooms.ex": "defmodule Chat.Rooms do\n  import Ecto.Query\n  alias Chat.Repo\n  alias Chat.Rooms.Room\n\n"
        "  def list_rooms, do: Repo.all(from r in Room, order_by: r.name)\n\n  def create_room(attrs) do\n    %Room{} |> Room.changeset(attrs) |> Repo.insert()\n  end\nend\n",
        "mix.exs": "defmodule Chat.MixProject do\n  use Mix.Project\n\n  def project do\n    [app: :chat, version: \"0.4.0\", elixir: \"~> 1.15\", deps: deps()]\n  end\n\n"
        "  defp deps do\n    [{:phoenix, \"~> 1.7.10\"}, {:phoenix_live_view, \"~> 0.20\"}, {:ecto_sql, \"~> 3.11\"}, {:postgrex, \">= 0.0.0\"}]\n  end\nend\n",
        "config/config.exs": "import Config\n\nconfig :chat, ecto_repos: [Chat.Repo]\n\nconfig :chat, ChatWeb.Endpoint,\n  url: [host: \"localhost\"],\n  pubsub_server: Chat.PubSub\n\nimport_config \"#{config_env()}.exs\"\n",
    },
    edits=[
        ("config/dev.exs", "  pool_size: @@k@@", "  pool_size: @@m@@"),
        ("lib/chat/messages.ex", "  @page_size @@k@@0", "  @page_size @@m@@0"),
        ("lib/chat/rooms.ex", "  def list_rooms, do: Repo.all(Room)", "  def list_rooms, do: Repo.all(from r in Room, order_by: r.name)"),
        ("lib/chat_web/channels/room_channel.ex", "  def handle_in(\"ping\", payload, socket) do", "  def handle_in(\"ping\", payload, _socket = socket) do"),
        ("mix.exs", "{:phoenix, \"~> 1.7.10\"}", "{:phoenix, \"~> 1.7.12\"}"),
        ("test/chat/rooms_test.exs", "    @valid_attrs %{}", "    @valid_attrs %{name: \"general\"}"),
    ],
    greps=[
        ("Repo.preload", "lib", "lib/chat/rooms.ex:31:    |> Repo.preload(:members)"),
        ("TODO", "lib", "lib/chat_web/live/room_live.ex:58:  # TODO: typing indicator\nlib/chat/messages.ex:12:  # TODO: pagination"),
        ("broadcast", "lib", "lib/chat_web/channels/room_channel.ex:27:    broadcast!(socket, \"new_msg\", %{body: body})"),
    ],
)

PROJECTS["forge-tools"] = dict(
    files=["tools/assetc/src/packer.cpp", "tools/assetc/src/main.cpp", "engine/render/shader_cache.cpp",
           "engine/core/job_system.cpp", "engine/core/job_system.h", "CMakeLists.txt", "tools/leveledit/src/level_io.cpp"],
    tests=["PackerTest", "JobSystemTest", "MathTest", "LevelIoTest", "ShaderCacheTest"],
    bash=[
        ("cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Debug", "-- The CXX compiler identification is Clang 17.0.6\n-- Detecting CXX compiler ABI info - done\n"
         "-- Found Vulkan: /usr/lib/x86_64-linux-gnu/libvulkan.so\n-- Configuring done (@@secs@@.1s)\n-- Generating done (0.1s)\n-- Build files have been written to: /home/dev/forge/build"),
        ("cmake --build build -j8", "[@@n@@/@@n@@] Building CXX object engine/CMakeFiles/forge_core.dir/core/math.cpp.o\n[@@n@@/@@n@@] Linking CXX executable tools/assetc/assetc"),
        ("cmake --build build -j8", "[@@k@@/@@n@@] Building CXX object tools/assetc/CMakeFiles/assetc.dir/src/main.cpp.o\nFAILED: tools/assetc/CMakeFiles/assetc.dir/src/main.cpp.o\n"
         "/home/dev/forge/@@file@@:@@line@@:12: error: no member named 'string_view' in namespace 'std'\n1 error generated.\nninja: build stopped: subcommand failed."),
        ("ctest --test-dir build --output-on-failure", "Test project /home/dev/forge/build\n    Start 1: @@test@@\n1/@@k@@ Test #1: @@test@@ .........   Passed    0.0@@k@@ sec\n\n100% tests passed, 0 tests failed out of @@k@@\n\nTotal Test time (real) =   @@secs@@.2 sec"),
        ("ctest --test-dir build -R @@test@@ --output-on-failure", "1/1 Test #3: @@test@@ ...***Failed    0.0@@k@@ sec\n[ RUN      ] @@test@@.HandlesEmptyInput\n"
         "/home/dev/forge/tests/@@test@@.cpp:@@line@@: Failure\nExpected equality of these values:\n  out.size()\n    Which is: @@m@@\n  0u\n[  FAILED  ] @@test@@.HandlesEmptyInput (0 ms)\n\n0% tests passed, 1 tests failed out of 1"),
        ("clang-tidy -p build @@file@@", "@@file@@:@@line@@:5: warning: use auto when initializing with a cast to avoid duplicating the type name [modernize-use-auto]\n1 warning generated."),
        ("clang-format -i @@file@@", ""),
        ("./build/tools/assetc/assetc pack assets/ -o build/assets.pak", "assetc 0.7.@@k@@\npacked @@n@@ textures, @@m@@ meshes, @@k@@ shaders -> build/assets.pak (@@n@@.@@k@@ MB) in @@ms@@ ms"),
        ("git submodule update --init --recursive", "Submodule path 'third_party/fmt': checked out '@@sha@@'\nSubmodule path 'third_party/glm': checked out '@@sha@@'"),
    ],
    reads={
        "CMakeLists.txt": "cmake_minimum_required(VERSION 3.24)\nproject(forge LANGUAGES CXX)\n\nset(CMAKE_CXX_STANDARD 20)\nset(CMAKE_CXX_STANDARD_REQUIRED ON)\n\n"
        "add_subdirectory(third_party/fmt)\nadd_subdirectory(engine)\nadd_subdirectory(tools/assetc)\nadd_subdirectory(tools/leveledit)\n",
        "engine/core/job_system.h": "#pragma once\n#include <functional>\n#include <thread>\n#include <vector>\n\nnamespace forge {\nclass JobSystem {\npublic:\n"
        "    explicit JobSystem(unsigned workers);\n    void submit(std::function<void()> fn);\n    void wait_idle();\nprivate:\n    std::vector<std::thread> threads_;\n};\n}\n",
        "tools/assetc/src/main.cpp": "int main(int argc, char** argv) {\n    auto args = forge::cli::parse(argc, argv);\n    if (args.command == \"pack\") {\n"
        "        return forge::assetc::pack(args.input, args.output);\n    }\n    fmt::print(stderr, \"unknown command {}\\n\", args.command);\n    return 2;\n}\n",
    },
    edits=[
        ("engine/core/job_system.cpp", "constexpr unsigned kQueueCapacity = @@n@@;", "constexpr unsigned kQueueCapacity = @@k@@024;"),
        ("tools/assetc/src/packer.cpp", "    constexpr int kMaxMips = @@k@@;", "    constexpr int kMaxMips = @@m@@;"),
        ("tools/assetc/src/main.cpp", "#include <string>", "#include <string>\n#include <string_view>"),
        ("engine/core/job_system.cpp", "    for (auto& t : threads_) t.join();", "    for (auto& t : threads_) {\n        if (t.joinable()) t.join();\n    }"),
        ("CMakeLists.txt", "set(CMAKE_CXX_STANDARD 17)", "set(CMAKE_CXX_STANDARD 20)"),
        ("tools/leveledit/src/level_io.cpp", "    // TODO error", "    // TODO(level_io): report the bad field"),
    ],
    greps=[
        ("std::mutex", "engine", "engine/core/job_system.h:31:    std::mutex queue_mutex_;\nengine/render/shader_cache.h:22:    std::mutex mutex_;"),
        ("TODO", "engine tools", "engine/render/shader_cache.cpp:77:    // TODO: evict old variants\ntools/assetc/src/packer.cpp:140:    // TODO: mip chain"),
        ("add_executable", ".", "tools/assetc/CMakeLists.txt:1:add_executable(assetc src/main.cpp src/packer.cpp)\ntools/leveledit/CMakeLists.txt:1:add_executable(leveledit src/main.cpp src/level_io.cpp)"),
    ],
)

BRANCHES = ["main", "feature/search-filters", "fix/flaky-tests", "chore/deps", "feature/export", "fix/ci-build"]


def fill(tpl, r, project, spec):
    def one(m):
        name = m.group(1)
        if name == "secs":
            return str(r.randint(2, 95))
        if name == "ms":
            return str(r.randint(3, 900))
        if name in ("n", "line"):
            return str(r.randint(10, 320))
        if name in ("k", "m"):
            return str(r.randint(1, 9))
        if name == "sha":
            return "%07x" % r.getrandbits(28)
        if name == "file":
            return r.choice(spec["files"])
        if name == "test":
            return r.choice(spec["tests"])
        if name == "branch":
            return r.choice(BRANCHES)
        if name == "project":
            return project
        raise KeyError(name)
    return re.sub(r"@@(\w+)@@", one, tpl)


def noise_record(r, project, spec):
    x = r.random()
    if x < 0.38:
        cmd, out = r.choice(spec["bash"])
        if r.random() < 0.12:
            cmd, out = r.choice(GIT)
        rc = Random(r.getrandbits(32))
        vals = {}

        def pick(m):
            name = m.group(1)
            if name not in vals:
                vals[name] = fill(m.group(0), rc, project, spec)
            return vals[name]
        # a placeholder named in the command keeps its value in the output
        cmd2 = re.sub(r"@@(\w+)@@", pick, cmd)
        out2 = re.sub(r"@@(\w+)@@", lambda m: vals[m.group(1)] if m.group(1) in vals
                      else fill(m.group(0), rc, project, spec), out)
        return B(cmd2, out2)
    if x < 0.53:
        path = r.choice(sorted(spec["reads"]))
        return R(path, spec["reads"][path])
    if x < 0.67:
        path, old, new = r.choice(spec["edits"])
        rc = Random(r.getrandbits(32))
        return E(path, fill(old, rc, project, spec), fill(new, rc, project, spec))
    if x < 0.76:
        pat, path, out = r.choice(spec["greps"])
        return G(pat, path, out)
    if x < 0.78:
        path, old, new = r.choice(spec["edits"])
        return W(path.rsplit(".", 1)[0] + "_draft." + path.rsplit(".", 1)[1], new)
    es = r.random() < 0.25
    if x < 0.93:
        return P(fill(r.choice(PROMPTS_ES if es else PROMPTS_EN), r, project, spec))
    return N(fill(r.choice(NOTES_ES if es else NOTES_EN), r, project, spec))


# ============================================================================
# Facts: one memorable thing each, 1-3 records, with their queries.
# Query tuples: ("exact", identifier) | ("kw", words[, lang]) | ("para", text) |
# ("para_es", text) | ("cross", text). The fact's records are the targets
# (for "exact", only the ones that literally contain the identifier).
# ============================================================================

FACTS = []


def F(fid, project, lang, recs, queries):
    FACTS.append(dict(id=fid, project=project, lang=lang, recs=recs, queries=queries))


J = "src/main/java/com/acme/inventory/"

# ---------------------------------------------------------------- inventory-svc (Java / Spring Boot)

F("inv01", "inventory-svc", "en", [
    B("./gradlew test --tests '*ReservationConcurrencyTest'",
      "> Task :test\n\nReservationConcurrencyTest > twoCheckoutsReserveLastUnit() FAILED\n"
      "    org.opentest4j.AssertionFailedError: expected: <0> but was: <-1>\n        at ReservationConcurrencyTest.java:58\n\n"
      "3 tests completed, 1 failed\n\nFAILURE: Build failed with an exception."),
    E(J + "reservation/ReservationService.java",
      "    @Transactional\n    public Reservation reserve(String sku, int qty) {",
      "    @Retryable(retryFor = ObjectOptimisticLockingFailureException.class, maxAttempts = 3, backoff = @Backoff(delay = 50))\n"
      "    @Transactional\n    public Reservation reserve(String sku, int qty) {"),
    N("StockItem now has @Version; concurrent reserve() on the last unit throws ObjectOptimisticLockingFailureException "
      "and the loser retries up to 3 times, then gets OUT_OF_STOCK. twoCheckoutsReserveLastUnit passes."),
], [("exact", "ObjectOptimisticLockingFailureException"), ("exact", "twoCheckoutsReserveLastUnit"),
    ("para", "two shoppers bought the final item simultaneously and on-hand went below zero, what guard got added?"),
    ("cross", "¿cómo evitamos que dos compras simultáneas dejaran el inventario en negativo en el servicio Java?")])

F("inv02", "inventory-svc", "en", [
    B("./gradlew flywayMigrate",
      "> Task :flywayMigrate FAILED\n\nFAILURE: Build failed with an exception.\n\n* What went wrong:\n"
      "Execution failed for task ':flywayMigrate'.\n> Error occurred while executing flywayMigrate\n  Validate failed: Migrations have failed validation\n"
      "  Migration checksum mismatch for migration version 7\n  -> Applied to database : 1837204411\n  -> Resolved locally    : -902113845\n"
      "  Either revert the changes to the migration, or run repair to update the schema history."),
    N("V7__add_warehouse_zone.sql had been edited after it was applied (someone fixed a typo in a column comment). "
      "Reverted the edit and put the change in V13__zone_comment.sql. Rule: never touch an applied migration; flywayRepair only on a throwaway dev DB."),
], [("exact", "Migration checksum mismatch for migration version 7"), ("exact", "V7__add_warehouse_zone.sql"),
    ("para", "the Postgres evolution tool complained after somebody tweaked an old script that prod had already seen"),
    ("kw", "flywayMigrate checksum mismatch warehouse zone")])

F("inv03", "inventory-svc", "en", [
    B("curl -s localhost:8080/api/warehouses/MAD1",
      '{"timestamp":"2024-03-12T10:14:03.551+00:00","status":500,"error":"Internal Server Error","path":"/api/warehouses/MAD1"}\n'
      "# server log:\norg.springframework.http.converter.HttpMessageNotWritableException: Could not write JSON: failed to lazily initialize "
      "a collection of role: com.acme.inventory.Warehouse.bins: could not initialize proxy - no Session"),
    E(J + "WarehouseController.java",
      "    public Warehouse get(@PathVariable String code) {\n        return warehouses.findByCode(code);",
      "    public WarehouseView get(@PathVariable String code) {\n        return WarehouseView.from(warehouses.findWithBinsByCode(code));"),
    N("Keep spring.jpa.open-in-view=false. Controllers return DTOs (WarehouseView), never entities; the repository fetches bins with a join fetch."),
], [("exact", "HttpMessageNotWritableException"), ("exact", "WarehouseView"),
    ("para", "serializing a depot with its shelving locations crashed outside the persistence context, what pattern did we adopt instead?"),
    ("cross", "el endpoint de almacenes devolvía 500 por una colección lazy al serializar a JSON, ¿qué cambiamos?")])

F("inv04", "inventory-svc", "en", [
    B("./gradlew bootRun --args='--spring.jpa.properties.hibernate.generate_statistics=true' & curl -s 'localhost:8080/api/skus?category=tools' > /dev/null",
      "INFO  o.h.e.i.StatisticalLoggingSessionEventListener : Session Metrics {\n    1204773 nanoseconds spent acquiring 1 JDBC connections;\n"
      "    402 JDBC statements executed;\n    318442101 nanoseconds spent executing 402 JDBC statements;\n}"),
    E(J + "SkuRepository.java",
      "    List<Sku> findAllByCategory(String category);",
      "    @EntityGraph(attributePaths = \"supplier\")\n    List<Sku> findAllByCategory(String category);"),
], [("exact", "@EntityGraph(attributePaths = \"supplier\")"),
    ("para", "listing products per section fired hundreds of round trips to postgres; how was that collapsed into one?"),
    ("kw", "402 JDBC statements supplier category")])

F("inv05", "inventory-svc", "en", [
    B("./gradlew integrationTest",
      "> Task :integrationTest\n\nWarehouseRepositoryIT > initializationError FAILED\n    java.lang.IllegalStateException: Could not find a valid Docker environment. "
      "Please see logs and check configuration\n\nFAILURE: Build failed with an exception."),
    E("~/.testcontainers.properties",
      "docker.host=unix:///var/run/docker.sock",
      "docker.host=unix:///Users/dev/.colima/default/docker.sock\nryuk.container.privileged=true"),
    N("Testcontainers on the laptop: Colima's socket is not at /var/run/docker.sock. Also export TESTCONTAINERS_DOCKER_SOCKET_OVERRIDE=/var/run/docker.sock for Ryuk."),
], [("exact", "Could not find a valid Docker environment"), ("exact", "TESTCONTAINERS_DOCKER_SOCKET_OVERRIDE"),
    ("para", "disposable database instances for the IT suite wouldn't boot on the mac because the VM runtime's endpoint lives elsewhere",),
    ("cross", "los tests de integración con Testcontainers no encontraban Docker en el portátil con Colima, ¿qué configuramos?")])

F("inv06", "inventory-svc", "en", [
    P("the StockAdjusted consumer applied the same adjustment twice after a rebalance, quantities are off for sku HX-2231"),
    W("src/main/resources/db/migration/V14__processed_events.sql",
      "CREATE TABLE processed_events (\n    event_id UUID PRIMARY KEY,\n    processed_at TIMESTAMPTZ NOT NULL DEFAULT now()\n);"),
    E("src/main/resources/application.yml",
      "    listener:\n      ack-mode: BATCH",
      "    listener:\n      ack-mode: MANUAL_IMMEDIATE"),
], [("exact", "processed_events"), ("exact", "MANUAL_IMMEDIATE"),
    ("para", "kafka redelivered messages after partitions moved and we double-counted; how is handling made idempotent?"),
    ("kw", "StockAdjusted consumer applied twice rebalance")])

F("inv07", "inventory-svc", "en", [
    B("./gradlew test --tests '*PriceCalculatorTest'",
      "PriceCalculatorTest > discountedPriceMatchesCatalog() FAILED\n    org.opentest4j.AssertionFailedError: expected: <10.00> but was: <10.0>\n\n"
      "1 test completed, 1 failed"),
    E(J + "pricing/PriceCalculator.java",
      "        return discounted.equals(catalogPrice);",
      "        // BigDecimal.equals compares scale too (10.0 != 10.00)\n        return discounted.compareTo(catalogPrice) == 0;"),
], [("exact", "discountedPriceMatchesCatalog"),
    ("para", "money amounts that look identical were judged unequal because of trailing decimals; which method do we call instead?"),
    ("cross", "¿por qué fallaba la comparación de precios con BigDecimal entre 10.0 y 10.00?"),
    ("kw", "BigDecimal equals compares scale")])

F("inv08", "inventory-svc", "en", [
    P("security review: staging /actuator/env shows spring.datasource.password in clear. lock down actuator"),
    E("src/main/resources/application.yml",
      "management:\n  endpoints:\n    web:\n      exposure:\n        include: \"*\"",
      "management:\n  endpoints:\n    web:\n      exposure:\n        include: health,info,prometheus"),
    N("Decision: only health, info and prometheus are exposed over HTTP. env/heapdump/loggers stay off in every profile."),
], [("exact", "include: health,info,prometheus"),
    ("para", "which framework monitoring routes remain reachable after the audit found a leaked secret on the pre-prod box?"),
    ("cross", "¿qué endpoints de actuator dejamos expuestos después de ver la contraseña de la base de datos en staging?"),
    ("kw", "actuator env password staging exposed")])

F("inv09", "inventory-svc", "en", [
    P("the nightly restock job fires at 1am UTC which is 3am in Madrid only in winter; suppliers complain it runs during their morning in summer"),
    E(J + "restock/RestockScheduler.java",
      "    @Scheduled(cron = \"0 0 1 * * *\")",
      "    @Scheduled(cron = \"0 0 3 * * *\", zone = \"Europe/Madrid\")"),
], [("exact", "zone = \"Europe/Madrid\""),
    ("para", "replenishment timer drifted an hour whenever daylight saving switched; what did we pin?"),
    ("cross", "el job nocturno de reposición se desplazaba una hora con el cambio de horario, ¿cómo lo arreglamos?")])

F("inv10", "inventory-svc", "es", [
    P("en producción salta HikariPool-1 - Connection is not available, request timed out after 30000ms cuando el proveedor tarda en responder. investiga"),
    E(J + "SupplierSyncService.java",
      "    @Transactional\n    public void sync(String supplierId) {\n        var prices = supplierClient.fetchPrices(supplierId);\n        repository.updatePrices(prices);",
      "    public void sync(String supplierId) {\n        var prices = supplierClient.fetchPrices(supplierId); // fuera de la transacción\n        self.updatePricesTx(prices);"),
    N("causa: el método @Transactional llamaba a la API lenta del proveedor y retenía la conexión del pool todo ese rato. "
      "La llamada HTTP va fuera de la transacción y maximum-pool-size sube de 10 a 20."),
], [("exact", "HikariPool-1 - Connection is not available"),
    ("para_es", "el conjunto de enlaces a postgres se agotaba mientras esperábamos al distribuidor externo, ¿qué movimos?"),
    ("cross", "database pool exhausted while a slow supplier HTTP call ran inside a transaction, what was the fix?"),
    ("kw", "transacción conexión pool proveedor lenta", "es")])

F("inv11", "inventory-svc", "es", [
    B("./gradlew compileJava",
      "> Task :compileJava FAILED\n" + J + "mapping/SkuMapper.java:14: error: Unmapped target property: \"warehouseCode\".\n"
      "    SkuDto toDto(Sku sku);\n           ^\n1 error"),
    E(J + "mapping/SkuMapper.java",
      "@Mapper(componentModel = \"spring\")",
      "@Mapper(componentModel = \"spring\", unmappedTargetPolicy = ReportingPolicy.ERROR)"),
    N("decisión: en MapStruct cada campo nuevo del DTO se mapea a mano (@Mapping) y unmappedTargetPolicy = ERROR para que nadie lo olvide en silencio."),
], [("exact", "Unmapped target property: \"warehouseCode\""), ("exact", "unmappedTargetPolicy = ReportingPolicy.ERROR"),
    ("para_es", "que el proceso de construcción proteste si algún atributo del objeto de transferencia queda sin rellenar: ¿por qué lo elegimos?"),
    ("cross", "why does the build now fail when a DTO field is not mapped by MapStruct?")])

F("inv12", "inventory-svc", "es", [
    P("el build de CI tarda 6 minutos en cada push aunque solo cambie un test. ¿podemos cachear algo de gradle?"),
    E("gradle.properties",
      "org.gradle.jvmargs=-Xmx2g",
      "org.gradle.jvmargs=-Xmx2g\norg.gradle.caching=true\norg.gradle.configuration-cache=true"),
    N("con build cache + configuration cache el pipeline pasa de 6m a 1m40s."),
], [("exact", "org.gradle.configuration-cache=true"),
    ("para_es", "la integración continua del inventario era lentísima; ¿qué opción la dejó por debajo de los 120 segundos?"),
    ("cross", "how did we get the Java CI pipeline from six minutes down to under two?")])

F("inv13", "inventory-svc", "es", [
    P("alguien mandó un ajuste con cantidad -40 a POST /api/adjustments y se aceptó. ¿no validamos?"),
    E(J + "AdjustmentController.java",
      "    public AdjustmentView create(@RequestBody AdjustmentRequest req) {",
      "    public AdjustmentView create(@Valid @RequestBody AdjustmentRequest req) {"),
    E(J + "AdjustmentRequest.java", "    int quantity;", "    @PositiveOrZero\n    int quantity;"),
], [("exact", "@PositiveOrZero"),
    ("para_es", "entraban movimientos con unidades menores que cero sin rechazo; ¿qué anotaciones pusimos?"),
    ("cross", "negative quantities were accepted by the adjustments API, which annotations did we add?"),
    ("kw", "ajuste cantidad aceptó validamos", "es")])

# ---------------------------------------------------------------- recsys-api (FastAPI / PyTorch)

F("rec01", "recsys-api", "en", [
    B("python -m training.train --epochs 10 --batch-size 256",
      "epoch 1/10:  12%|█▏        | 410/3398 [01:12<08:45]\nTraceback (most recent call last):\n  File \"training/train.py\", line 141, in train_epoch\n"
      "    loss.backward()\ntorch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.65 GiB total capacity; "
      "20.91 GiB already allocated; 1.12 GiB free)"),
    E("training/train.py",
      "    logits = model(users, items)\n    loss = criterion(logits, labels)\n    loss.backward()",
      "    with torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16):\n        logits = model(users, items)\n"
      "        loss = criterion(logits, labels) / ACCUM_STEPS\n    loss.backward()\n    if (step + 1) % ACCUM_STEPS == 0:\n        optimizer.step()\n        optimizer.zero_grad()"),
    N("batch 64 x ACCUM_STEPS=4 keeps the effective batch at 256 and peaks at 11 GB with bf16 autocast."),
], [("exact", "torch.cuda.OutOfMemoryError"), ("exact", "ACCUM_STEPS"),
    ("para", "the graphics card ran short of VRAM during fitting; how do we preserve an equivalent overall minibatch today?"),
    ("cross", "el entrenamiento se quedaba sin memoria de GPU, ¿cómo mantuvimos el tamaño de batch efectivo?")])

F("rec02", "recsys-api", "en", [
    P("calling /v1/recommend/u42 twice in a row gives different items, the model should be deterministic at inference"),
    E("app/models/loader.py",
      "    model.load_state_dict(torch.load(path, map_location=device))\n    return model",
      "    model.load_state_dict(torch.load(path, map_location=device))\n    model.eval()  # dropout was still active\n    return model"),
    E("app/routers/recommend.py",
      "    scores = model(user_vec, item_matrix)",
      "    with torch.inference_mode():\n        scores = model(user_vec, item_matrix)"),
], [("exact", "torch.inference_mode()"),
    ("para", "an identical person asking back to back saw varying suggestions; regularization layers were still on when serving"),
    ("kw", "recommend twice different items dropout")])

F("rec03", "recsys-api", "en", [
    B("hey -n 2000 -c 50 http://localhost:8000/v1/recommend/u1",
      "Summary:\n  Total:\t41.2219 secs\n  Slowest:\t4.1023 secs\n  Fastest:\t0.0412 secs\n  Average:\t1.0288 secs\n  Requests/sec:\t48.5178\n\n"
      "Latency distribution:\n  50% in 0.9121 secs\n  99% in 4.0110 secs"),
    E("app/routers/recommend.py",
      "@router.get(\"/recommend/{user_id}\")\nasync def recommend(user_id: str, k: int = 10):",
      "@router.get(\"/recommend/{user_id}\")\ndef recommend(user_id: str, k: int = 10):  # sync: runs in the threadpool, the forward pass blocked the event loop"),
], [
    ("para", "p99 spiked to four seconds under load because inference stalled the coroutine scheduler; what changed in the handler signature?"),
    ("cross", "¿por qué la latencia p99 del endpoint de recomendaciones llegaba a 4 segundos con carga?"),
    ("kw", "recommend threadpool blocked event loop")])

F("rec04", "recsys-api", "en", [
    B("docker compose run trainer python -m training.train",
      "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).\n"
      "RuntimeError: DataLoader worker (pid 211) is killed by signal: Bus error. It is possible that dataloader's workers are out of shared memory."),
    E("docker-compose.yml",
      "  trainer:\n    build: .\n    runtime: nvidia",
      "  trainer:\n    build: .\n    runtime: nvidia\n    shm_size: 2gb"),
], [("exact", "shm_size: 2gb"), ("exact", "Unexpected bus error encountered in worker"),
    ("para", "batch loader subprocesses died with SIGBUS inside the container; what limit did we raise?"),
    ("cross", "los workers del DataLoader morían con bus error dentro de Docker, ¿qué ajustamos?")])

F("rec05", "recsys-api", "en", [
    B("poetry run pytest -q",
      "......\n=============================== warnings summary ===============================\n"
      "app/schemas.py:14: PydanticDeprecatedSince20: Support for class-based `config` is deprecated, use ConfigDict instead.\n"
      "  class ItemOut(BaseModel):\n"
      "  Valid config keys have changed in V2:\n  * 'orm_mode' has been renamed to 'from_attributes'\n38 passed, 6 warnings in 2.91s"),
    E("app/schemas.py",
      "class ItemOut(BaseModel):\n    class Config:\n        orm_mode = True",
      "class ItemOut(BaseModel):\n    model_config = ConfigDict(from_attributes=True)"),
], [("exact", "PydanticDeprecatedSince20"), ("exact", "from_attributes=True"),
    ("para", "after the big data-checking library major bump, how should response types read database rows?"),
    ("kw", "orm_mode renamed from_attributes")])

F("rec06", "recsys-api", "en", [
    P("similar-items for i_1009 returns garbage: top neighbours are the most popular items, not similar ones"),
    E("app/index.py",
      "    index = faiss.IndexFlatIP(dim)\n    index.add(vectors)",
      "    index = faiss.IndexFlatIP(dim)\n    faiss.normalize_L2(vectors)  # inner product == cosine only on unit vectors\n    index.add(vectors)"),
    N("query vectors must go through faiss.normalize_L2 as well, otherwise long (popular) item vectors still win."),
], [("exact", "faiss.normalize_L2"),
    ("para", "closest-match search kept surfacing bestsellers since embedding magnitudes weren't equal to one; what happens before inserting?"),
    ("cross", "el índice de vecinos devolvía siempre los artículos populares en vez de similares, ¿qué faltaba?"),
    ("kw", "similar items popular neighbours normalize")])

F("rec07", "recsys-api", "en", [
    B("python -m training.evaluate --checkpoint checkpoints/two_tower_best.pt",
      "recall@20 = 0.6137\nndcg@20   = 0.4412\ncoverage  = 0.083"),
    N("recall@20 of 0.61 is far too good: train_test_split shuffled rows, so the same user's later clicks were in train. "
      "Split by time now: everything before 2024-02-01 is train, after is test. Honest recall@20 is 0.27."),
    E("training/dataset.py",
      "    train, test = train_test_split(frame, test_size=0.2, random_state=0)",
      "    cutoff = pd.Timestamp(\"2024-02-01\")\n    train, test = frame[frame.ts < cutoff], frame[frame.ts >= cutoff]"),
], [("exact", "recall@20 = 0.6137"),
    ("para", "offline scores looked suspiciously high because future interactions leaked into fitting; how is the holdout carved out these days?"),
    ("cross", "¿por qué el recall offline salía inflado y cómo separamos ahora train y test?")])

F("rec08", "recsys-api", "en", [
    B("kubectl -n recsys describe pod recsys-api-7d9c6b5b9-kq2lp | tail -6",
      "    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n    Restart Count:  4\n"
      "  Limits:\n    memory:  6Gi"),
    E("gunicorn.conf.py",
      "workers = 8\nworker_class = \"uvicorn.workers.UvicornWorker\"",
      "workers = 2\nworker_class = \"uvicorn.workers.UvicornWorker\"\npreload_app = True  # each worker held its own 1.3 GB copy of the model"),
], [("exact", "preload_app = True"),
    ("para", "containers kept dying out of RAM since each process kept duplicate weights; how many do we run?"),
    ("cross", "¿cuántos workers de gunicorn usamos y por qué el pod acababa OOMKilled?"),
    ("kw", "gunicorn workers OOMKilled model copy")])

F("rec09", "recsys-api", "es", [
    B("python -m training.train --epochs 10 --lr 1e-2",
      "epoch 1/10  train_loss=0.6931\nepoch 2/10  train_loss=0.5120\nepoch 3/10  train_loss=nan\nepoch 4/10  train_loss=nan"),
    N("la pérdida se vuelve NaN en la época 3: lr 1e-2 con AdamW es demasiado. Bajo a 3e-4 y recorto gradientes con clip_grad_norm_ a 1.0."),
    E("training/train.py",
      "    loss.backward()\n    optimizer.step()",
      "    loss.backward()\n    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n    optimizer.step()"),
], [("exact", "clip_grad_norm_"),
    ("para_es", "la función de coste explotaba hasta volverse indefinida a mitad del aprendizaje; ¿qué tasa y qué límite usamos?"),
    ("cross", "training loss turned into NaN after a few epochs, what learning rate and clipping fixed it?"),
    ("kw", "pérdida NaN época AdamW", "es")])

F("rec10", "recsys-api", "es", [
    P("el frontend da error de CORS solo en la petición OPTIONS (preflight), el GET directo funciona"),
    E("app/main.py",
      "app.add_middleware(CORSMiddleware, allow_origins=settings.cors_origins)",
      "app.add_middleware(\n    CORSMiddleware,\n    allow_origins=settings.cors_origins,\n    allow_methods=[\"*\"],\n    allow_headers=[\"Authorization\", \"Content-Type\"],\n)"),
], [("exact", "allow_headers=[\"Authorization\", \"Content-Type\"]"),
    ("para_es", "el navegador rechazaba la consulta previa de origen cruzado del cliente web; ¿qué parámetros faltaban?"),
    ("cross", "browser preflight requests failed against the recommendation API while plain GETs worked, what was missing?")])

F("rec11", "recsys-api", "es", [
    P("dos entrenamientos con la misma config dan métricas distintas (recall 0.27 vs 0.25). necesito reproducibilidad"),
    W("training/seed.py",
      "import random\n\nimport numpy as np\nimport torch\n\n\ndef seed_everything(seed: int = 42) -> None:\n    random.seed(seed)\n    np.random.seed(seed)\n"
      "    torch.manual_seed(seed)\n    torch.cuda.manual_seed_all(seed)\n    torch.backends.cudnn.deterministic = True\n    torch.backends.cudnn.benchmark = False\n"),
], [("exact", "seed_everything"), ("exact", "torch.backends.cudnn.deterministic = True"),
    ("para_es", "repetir un experimento idéntico daba números diferentes; ¿cómo conseguimos resultados repetibles?"),
    ("cross", "how did we make two training runs with identical settings give the same metrics?")])

F("rec12", "recsys-api", "es", [
    P("los usuarios ven recomendaciones de hace días. ¿la caché de redis no expira?"),
    E("app/cache.py",
      "    await redis.set(f\"rec:{user_id}\", payload)",
      "    await redis.setex(f\"rec:{user_id}\", 900, payload)  # 15 min"),
    N("las claves rec:* no tenían TTL; ahora setex con 900 s. Borré las viejas con redis-cli --scan --pattern 'rec:*' | xargs redis-cli del"),
], [("exact", "redis.setex"),
    ("para_es", "la gente recibía sugerencias antiguas porque lo almacenado nunca caducaba; ¿cuánto dura actualmente?"),
    ("cross", "cached recommendations in Redis never expired, what TTL did we set?"),
    ("kw", "redis recomendaciones expira caché", "es")])

F("rec13", "recsys-api", "es", [
    B("python -m tools.export_onnx --checkpoint checkpoints/two_tower_best.pt",
      "torch.onnx.errors.UnsupportedOperatorError: Exporting the operator 'aten::scaled_dot_product_attention' to ONNX opset version 13 is not supported."),
    E("tools/export_onnx.py",
      "    torch.onnx.export(model, dummy, out_path, opset_version=13)",
      "    torch.onnx.export(model, dummy, out_path, opset_version=17)"),
    N("para exportar a ONNX hace falta opset 17 por la atención; onnxruntime 1.17 lo soporta."),
], [("exact", "aten::scaled_dot_product_attention"), ("exact", "opset_version=17"),
    ("para_es", "pasar la red al formato de intercambio fallaba con la capa de foco del transformer; ¿qué nivel de compatibilidad fijamos?"),
    ("cross", "exporting the two tower model failed on the attention operator, which opset did we switch to?")])

# ---------------------------------------------------------------- trailmate-ios (Swift / SwiftUI)

F("ios01", "trailmate-ios", "en", [
    B("xcrun simctl spawn booted log show --last 2m --predicate 'subsystem == \"com.apple.SwiftUI\"'",
      "[SwiftUI] Publishing changes from background threads is not allowed; make sure to publish values from the main thread "
      "(via operators like receive(on:)) on model updates."),
    E("TrailMate/ViewModels/TrailListViewModel.swift",
      "final class TrailListViewModel: ObservableObject {",
      "@MainActor\nfinal class TrailListViewModel: ObservableObject {"),
], [("exact", "Publishing changes from background threads is not allowed"),
    ("para", "purple runtime warning about UI state being mutated off the primary queue; what attribute fixed the list presenter?"),
    ("cross", "¿qué pusimos en el view model de la lista de rutas para no publicar cambios desde hilos de fondo?"),
    ("kw", "background threads publish TrailListViewModel")])

F("ios02", "trailmate-ios", "en", [
    P("MapViewController never prints deinit when I pop it, and Instruments shows LocationService growing. leak?"),
    E("TrailMate/Services/LocationService.swift",
      "        manager.onUpdate = { location in\n            self.track.append(location)",
      "        manager.onUpdate = { [weak self] location in\n            self?.track.append(location)"),
    N("Retain cycle: LocationService -> onUpdate closure -> self. [weak self] in the closure; MapViewController deinit now logs."),
], [("exact", "[weak self]"),
    ("para", "a screen stayed alive forever after navigating back because a callback held a strong reference; how was it broken?"),
    ("cross", "el controlador del mapa nunca se liberaba al volver atrás, ¿dónde estaba el ciclo de referencias?")])

F("ios03", "trailmate-ios", "en", [
    B("xcrun simctl launch --console booted com.trailmate.app",
      "This app has crashed because it attempted to access privacy-sensitive data without a usage description. "
      "The app's Info.plist must contain an NSLocationWhenInUseUsageDescription key with a string value explaining to the user how the app uses this data."),
    E("TrailMate/Info.plist",
      "\t<key>UILaunchScreen</key>",
      "\t<key>NSLocationWhenInUseUsageDescription</key>\n\t<string>TrailMate uses your location to show where you are on the trail.</string>\n\t<key>UILaunchScreen</key>"),
], [("exact", "NSLocationWhenInUseUsageDescription"),
    ("para", "on first open it died the moment GPS permission was requested; what justification sentence had to be declared?"),
    ("kw", "crashed privacy-sensitive usage description location")])

F("ios04", "trailmate-ios", "en", [
    B("xcrun simctl launch --console booted com.trailmate.app",
      "CoreData: error: -addPersistentStoreWithType:SQLite configuration:(null) URL:file:///.../TrailMate.sqlite options:{} "
      "... returned error NSCocoaErrorDomain (134100) with userInfo dictionary {\n    metadata = {...};\n"
      "    reason = \"The model used to open the store is incompatible with the one used to create the store\";\n}"),
    E("TrailMate/Persistence/CoreDataStack.swift",
      "        container.loadPersistentStores { _, error in",
      "        let description = container.persistentStoreDescriptions.first\n        description?.shouldMigrateStoreAutomatically = true\n"
      "        description?.shouldInferMappingModelAutomatically = true\n        container.loadPersistentStores { _, error in"),
    N("added elevationGain to Trail in a new model version (TrailMate 3) and set it current; lightweight migration handles it."),
], [("exact", "The model used to open the store is incompatible"), ("exact", "shouldInferMappingModelAutomatically"),
    ("para", "after adding a climb attribute, existing installs crashed opening the local database; how do upgrades work now?"),
    ("cross", "la app se cerraba al abrir la base de CoreData tras añadir un atributo, ¿cómo migramos?")])

F("ios05", "trailmate-ios", "en", [
    B("bundle exec fastlane beta",
      "[14:02:11]: ▸ error: No profiles for 'com.trailmate.app' were found: Xcode couldn't find any iOS App Store provisioning profiles "
      "matching 'com.trailmate.app'.\n[14:02:11]: Exit status: 65\n[!] Error building the application - see the log above"),
    B("bundle exec fastlane match appstore --readonly false",
      "[14:05:40]: 🔓  Successfully decrypted certificates repo\n[14:05:52]: Installed Provisioning Profile 'match AppStore com.trailmate.app'\n"
      "[14:05:52]: All required keys, certificates and provisioning profiles are installed 🙌"),
], [("exact", "No profiles for 'com.trailmate.app' were found"),
    ("para", "the TestFlight upload lane failed signing because distribution credentials were absent on this mac"),
    ("kw", "fastlane beta provisioning profiles match appstore")])

F("ios06", "trailmate-ios", "en", [
    B("xcodebuild test -scheme TrailMate -only-testing:TrailMateTests/APIClientTests",
      "APIClientTests.swift:48: error: -[TrailMateTests.APIClientTests testDecodesHikeLog] : failed: caught error: "
      "\"typeMismatch(Swift.Double, Swift.DecodingError.Context(codingPath: [CodingKeys(stringValue: \"recorded_at\", intValue: nil)], "
      "debugDescription: \"Expected to decode Double but found a string/data instead.\", underlyingError: nil))\""),
    E("TrailMate/Services/APIClient.swift",
      "        return try JSONDecoder().decode(HikeLog.self, from: data)",
      "        let decoder = JSONDecoder()\n        decoder.dateDecodingStrategy = .iso8601\n        return try decoder.decode(HikeLog.self, from: data)"),
], [("exact", "testDecodesHikeLog"), ("exact", "dateDecodingStrategy = .iso8601"),
    ("para", "timestamps from the backend arrive as text but the parser wanted seconds since 2001; what strategy did we set?"),
    ("cross", "¿por qué fallaba decodificar recorded_at en el cliente de la API de iOS?")])

F("ios07", "trailmate-ios", "en", [
    P("in the saved trails list, deleting one row removes a different row and the rows flicker. two trails are both called 'Loop'"),
    E("TrailMate/Views/SavedTrailsView.swift",
      "            ForEach(saved, id: \\.name) { trail in",
      "            ForEach(saved) { trail in  // Trail is Identifiable by UUID; names are not unique"),
], [("exact", "ForEach(saved, id: \\.name)"),
    ("para", "swiping away an entry wiped out its namesake instead and cells blinked; which key distinguishes them these days?"),
    ("cross", "al borrar una ruta guardada desaparecía otra con el mismo nombre, ¿qué identificador usamos?"),
    ("kw", "deleting row removes different flicker")])

F("ios08", "trailmate-ios", "en", [
    B("xcrun simctl launch --console booted com.trailmate.app",
      "*** Terminating app due to uncaught exception 'NSInternalInconsistencyException', reason: "
      "'All launch handlers must be registered before application finishes launching'"),
    E("TrailMate/TrailMateApp.swift",
      "            .onAppear { BackgroundSync.register() }",
      "            // registration moved to AppDelegate.application(_:didFinishLaunchingWithOptions:) before it returns"),
    N("BGTaskScheduler.register for com.trailmate.refresh has to happen in didFinishLaunching, not in a view's onAppear."),
], [("exact", "All launch handlers must be registered"), ("exact", "com.trailmate.refresh"),
    ("para", "the periodic sync job crashed startup because its hook was wired too late in the lifecycle; where does it go?"),
    ("cross", "la app crasheaba al arrancar por registrar la tarea en segundo plano demasiado tarde, ¿dónde se registra?")])

F("ios09", "trailmate-ios", "en", [
    B("swift package resolve",
      "error: Dependencies could not be resolved because root depends on 'swift-collections' 1.1.0..<2.0.0 and "
      "'mapbox-maps-ios' >= 11.2.0 depends on 'swift-collections' 1.0.0..<1.1.0."),
    E("TrailMate.xcodeproj/project.pbxproj",
      "\t\t\t\tminimumVersion = 1.1.0;",
      "\t\t\t\tkind = exactVersion;\n\t\t\t\tversion = 1.0.6;"),
    N("pinned swift-collections to 1.0.6 until Mapbox relaxes its range."),
], [("exact", "Dependencies could not be resolved because root depends on 'swift-collections'"),
    ("para", "the IDE couldn't reconcile two libraries demanding conflicting bounds on one shared module; which release did we freeze?"),
    ("kw", "swift-collections mapbox pinned")])

F("ios10", "trailmate-ios", "es", [
    P("en la pantalla de notas del sendero el teclado tapa el TextField y no se puede cerrar"),
    E("TrailMate/Views/TrailNotesView.swift",
      "        ScrollView {\n            NotesEditor(text: $notes)\n        }",
      "        ScrollView {\n            NotesEditor(text: $notes)\n        }\n        .scrollDismissesKeyboard(.interactively)"),
], [("exact", ".scrollDismissesKeyboard(.interactively)"),
    ("para_es", "al escribir apuntes de la excursión, el campo de texto quedaba oculto bajo la botonera virtual; ¿qué modificador lo resolvió?"),
    ("cross", "the on-screen keyboard covered the notes field on the trail screen, how did we let users dismiss it?"),
    ("kw", "teclado tapa notas sendero", "es")])

F("ios11", "trailmate-ios", "es", [
    P("en modo oscuro el botón de empezar ruta es ilegible, el verde está puesto a mano con Color(red:green:blue:)"),
    E("TrailMate/Views/StartButton.swift",
      "            .background(Color(red: 0.12, green: 0.45, blue: 0.2))",
      "            .background(Color(\"TrailAccent\"))  // Assets.xcassets: variantes Any/Dark"),
    N("regla: nada de colores fijos en vistas; todo color nuevo va al Asset Catalog con variante clara y oscura."),
], [("exact", "Color(\"TrailAccent\")"),
    ("para_es", "con el tema nocturno del iPhone un control de inicio no se distinguía; ¿de dónde sacamos los tonos ahora?"),
    ("cross", "why was the start route button unreadable in dark mode and where do colors live now?")])

F("ios12", "trailmate-ios", "es", [
    B("xcrun simctl spawn booted log show --last 1m --predicate 'process == \"TrailMate\"'",
      "TrailMate: [APIClient] request failed: Error Domain=NSURLErrorDomain Code=-999 \"cancelled\" "
      "UserInfo={NSErrorFailingURLKey=https://api.trailmate.app/trails/near}"),
    E("TrailMate/ViewModels/NearbyViewModel.swift",
      "        } catch {\n            self.error = error",
      "        } catch is CancellationError {\n            return  // .task cancela al desaparecer la vista\n        } catch let e as URLError where e.code == .cancelled {\n            return\n        } catch {\n            self.error = error"),
    N("los -999 \"cancelled\" no son fallos: .task cancela la petición cuando la vista desaparece. No mostramos alerta."),
], [("exact", "NSURLErrorDomain Code=-999"),
    ("para_es", "aparecían avisos de problema de red cada vez que el usuario salía rápido de la pantalla de cercanos; ¿por qué los ignoramos?"),
    ("cross", "why do we ignore URLError -999 cancelled in the nearby trails screen?")])

F("ios13", "trailmate-ios", "es", [
    P("importar un GPX de 40 MB congela la interfaz unos 8 segundos"),
    E("TrailMate/Import/GPXImporter.swift",
      "    func importFile(_ url: URL) throws -> Track {\n        let parser = XMLParser(contentsOf: url)!",
      "    func importFile(_ url: URL) async throws -> Track {\n        try await Task.detached(priority: .userInitiated) {\n            let parser = XMLParser(contentsOf: url)!"),
    N("el parseo del GPX va en Task.detached; la UI solo recibe el Track al final y muestra progreso."),
], [("exact", "GPXImporter.swift"),
    ("para_es", "abrir trazados enormes dejaba la app paralizada un buen rato; ¿a qué hilo mandamos el análisis?"),
    ("cross", "importing a big GPX file froze the UI for seconds, how did we move the parsing off the main thread?"),
    ("kw", "GPX congela interfaz segundos", "es")])

# ---------------------------------------------------------------- shop-laravel (PHP / Laravel)

F("shop01", "shop-laravel", "en", [
    B("php artisan test --filter=CouponCheckoutTest",
      "   FAIL  Tests\\Feature\\CouponCheckoutTest\n  ⨯ order stores the coupon code\n\n"
      "  Illuminate\\Database\\Eloquent\\MassAssignmentException\n\n  Add [discount_code] to fillable property to allow mass assignment on [App\\Models\\Order].\n\n"
      "  at vendor/laravel/framework/src/Illuminate/Database/Eloquent/Model.php:528"),
    E("app/Models/Order.php",
      "    protected $fillable = ['user_id', 'total_cents', 'status'];",
      "    protected $fillable = ['user_id', 'total_cents', 'status', 'discount_code'];"),
], [("exact", "MassAssignmentException"), ("exact", "Add [discount_code] to fillable property"),
    ("para", "creating a purchase with a promo attribute was rejected by the ORM whitelist; which column got permitted?"),
    ("cross", "guardar el código de descuento en el pedido lanzaba una excepción de asignación masiva, ¿qué cambiamos?")])

F("shop02", "shop-laravel", "en", [
    B("php artisan horizon:failed | head -8",
      "SendOrderConfirmation  redis  default  2024-03-05 11:42:10\n"
      "Illuminate\\Database\\Eloquent\\ModelNotFoundException: No query results for model [App\\Models\\Order] 10482"),
    E("config/queue.php",
      "            'after_commit' => false,",
      "            'after_commit' => true,"),
    N("SendOrderConfirmation was dispatched inside DB::transaction and a worker picked it up before the commit, "
      "so the order row didn't exist yet. after_commit => true on the redis connection."),
], [("exact", "'after_commit' => true"), ("exact", "No query results for model [App\\Models\\Order]"),
    ("para", "background mail job occasionally couldn't find the purchase it was handed, since it started before the write was durable"),
    ("kw", "SendOrderConfirmation dispatched transaction before commit")])

F("shop03", "shop-laravel", "en", [
    B("stripe trigger checkout.session.completed",
      "Setting up fixture for: checkout_session\nTrigger succeeded! Check dashboard for event details.\n"
      "# stripe listen output:\n2024-03-07 09:12:44   --> checkout.session.completed [evt_1OrX2Q]\n2024-03-07 09:12:44  <--  [419] POST http://shop.test/stripe/webhook"),
    E("app/Http/Middleware/VerifyCsrfToken.php",
      "    protected $except = [\n        //\n    ];",
      "    protected $except = [\n        'stripe/webhook',\n    ];"),
], [("exact", "[419] POST http://shop.test/stripe/webhook"),
    ("para", "payment provider callbacks bounced with page expired; which anti-forgery exemption did we configure?"),
    ("cross", "los webhooks de Stripe devolvían 419, ¿qué ruta excluimos de la verificación CSRF?"),
    ("kw", "stripe webhook 419 except")])

F("shop04", "shop-laravel", "en", [
    P("in production PaymentGateway gets a null api key, locally it works. prod runs php artisan config:cache on deploy"),
    G("env\\(", "app", "app/Services/PaymentGateway.php:17:        $this->key = env('MOLLIE_KEY');"),
    E("app/Services/PaymentGateway.php",
      "        $this->key = env('MOLLIE_KEY');",
      "        $this->key = config('services.mollie.key');  // env() returns null once config is cached"),
], [("exact", "MOLLIE_KEY"), ("exact", "config('services.mollie.key')"),
    ("para", "after release-time caching, a secret read straight from dotenv came back empty inside the gateway class"),
    ("cross", "en producción la clave del gateway de pago llegaba nula tras cachear la configuración, ¿por qué?")])

F("shop05", "shop-laravel", "en", [
    B("php artisan test --filter=PercentCouponTest",
      "   FAIL  Tests\\Unit\\PercentCouponTest\n  ⨯ 15 percent off 133.33\n  Stripe\\Exception\\InvalidRequestException: Invalid integer: 11333.049999999999"),
    E("app/Pricing/CouponCalculator.php",
      "        return $total * (1 - $coupon->percent / 100);",
      "        // all money is integer cents; round once, here\n        return (int) round($totalCents * (100 - $coupon->percent) / 100);"),
], [("exact", "Invalid integer: 11333.049999999999"), ("exact", "PercentCouponTest"),
    ("para", "a proportional discount produced fractional amounts the card processor refused; what representation do sums use these days?"),
    ("kw", "coupon percent integer cents round")])

F("shop06", "shop-laravel", "en", [
    B("php artisan horizon:failed | head -3",
      "GenerateInvoicePdf  redis  default\nIlluminate\\Queue\\MaxAttemptsExceededException: App\\Jobs\\GenerateInvoicePdf "
      "has been attempted too many times or run too long. The job may have previously timed out."),
    E("config/horizon.php",
      "                'timeout' => 60,",
      "                'timeout' => 120,  // must stay below retry_after (180) in config/queue.php"),
    N("retry_after was 90 and the PDF job can take 100 s, so another worker started a second attempt while the first was running. retry_after=180, timeout=120."),
], [("exact", "MaxAttemptsExceededException"), ("exact", "GenerateInvoicePdf"),
    ("para", "a slow document rendering task got picked up again by another runner mid-flight; what ordering rule between the two limits did we settle on?"),
    ("cross", "¿por qué el job del PDF de factura se ejecutaba dos veces y qué relación deben tener timeout y retry_after?")])

F("shop07", "shop-laravel", "en", [
    B("php artisan test --filter=SalesReportTest",
      "  Illuminate\\Database\\QueryException\n\n  SQLSTATE[42000]: Syntax error or access violation: 1055 Expression #3 of SELECT list is not in GROUP BY clause "
      "and contains nonaggregated column 'shop.products.name' which is not functionally dependent on columns in GROUP BY clause; "
      "this is incompatible with sql_mode=only_full_group_by"),
    E("app/Reports/SalesReport.php",
      "            ->groupBy('products.id')",
      "            ->groupBy('products.id', 'products.name', 'products.sku')"),
    N("kept strict mode on in config/database.php; fixed the query instead of turning strict off."),
], [("exact", "only_full_group_by"), ("exact", "SQLSTATE[42000]"),
    ("para", "monthly revenue summary broke on mysql because a picked field wasn't aggregated; did we loosen the server's rules?"),
    ("cross", "el informe de ventas fallaba en MySQL por una columna fuera del GROUP BY, ¿desactivamos el modo estricto?")])

F("shop08", "shop-laravel", "en", [
    B("curl -sI https://shop.example.com/storage/products/4411/main.webp | head -1", "HTTP/2 404"),
    E("deploy.sh",
      "php artisan migrate --force\nphp artisan config:cache",
      "php artisan migrate --force\nphp artisan storage:link\nphp artisan config:cache"),
], [("exact", "php artisan storage:link"),
    ("para", "uploaded catalogue pictures were missing on the live site because a public symlink wasn't created on release"),
    ("kw", "deploy storage link 404 products")])

F("shop09", "shop-laravel", "es", [
    P("usuarios se quedan deslogueados al azar al pasar por caja. hay 2 servidores web detrás del balanceador y SESSION_DRIVER=file"),
    E(".env.production",
      "SESSION_DRIVER=file",
      "SESSION_DRIVER=redis\nSESSION_CONNECTION=session"),
    N("con dos nodos cada uno tenía sus propios ficheros de sesión; el balanceador alternaba y se perdía el login. Sesiones en redis."),
], [("exact", "SESSION_DRIVER=redis"),
    ("para_es", "clientes eran expulsados a mitad de compra porque cada máquina guardaba su estado en disco local; ¿dónde lo compartimos?"),
    ("cross", "customers got logged out randomly at checkout behind the load balancer, where do sessions live now?"),
    ("kw", "deslogueados balanceador servidores sesión", "es")])

F("shop10", "shop-laravel", "es", [
    P("cada PR tiene comentarios de estilo (espacios, orden de imports). quiero que lo haga una herramienta"),
    E(".github/workflows/ci.yml",
      "      - run: ./vendor/bin/phpstan analyse",
      "      - run: ./vendor/bin/pint --test\n      - run: ./vendor/bin/phpstan analyse"),
    N("decisión: Pint con preset laravel en pre-commit y en CI (pint --test falla si hay diferencias). Se acabaron las discusiones de estilo en las revisiones."),
], [("exact", "./vendor/bin/pint --test"),
    ("para_es", "para dejar de pelear por el formato entre compañeros, ¿qué formateador automático adoptamos?"),
    ("cross", "which PHP code style tool did we adopt so reviews stop arguing about formatting?")])

F("shop11", "shop-laravel", "es", [
    P("dos pedidos han comprado la última unidad de la taza SKU MUG-07 y el stock quedó en -1"),
    E("app/Actions/PlaceOrder.php",
      "            $product = Product::find($item->product_id);\n            $product->decrement('stock', $item->qty);",
      "            $product = Product::whereKey($item->product_id)->lockForUpdate()->first();\n"
      "            if ($product->stock < $item->qty) {\n                throw new OutOfStock($product);\n            }\n            $product->decrement('stock', $item->qty);"),
], [("exact", "lockForUpdate()"), ("exact", "MUG-07"),
    ("para_es", "un par de clientes se hicieron con el mismo tazón final y las existencias acabaron negativas en la tienda Laravel; ¿qué bloqueo pusimos?"),
    ("cross", "two Laravel orders bought the last mug and stock went negative, what row lock did we add?")])

F("shop12", "shop-laravel", "es", [
    P("el checkout tarda 3 segundos y casi todo es el envío del correo de confirmación, que es síncrono"),
    E("app/Mail/OrderConfirmed.php",
      "class OrderConfirmed extends Mailable",
      "class OrderConfirmed extends Mailable implements ShouldQueue"),
    N("el Mailable implementa ShouldQueue; el checkout baja de 3 s a 350 ms y el correo sale por Horizon."),
], [("exact", "implements ShouldQueue"),
    ("para_es", "finalizar la compra era lento porque esperábamos al SMTP; ¿cómo quitamos ese paso del camino?"),
    ("cross", "checkout took three seconds because the confirmation email was sent synchronously, how did we fix it?"),
    ("kw", "checkout correo confirmación síncrono", "es")])

F("shop13", "shop-laravel", "es", [
    B("curl -s https://shop.example.com/ | head -3",
      "<!DOCTYPE html>\n<title>Vite manifest not found</title>\nIlluminate\\Foundation\\ViteManifestNotFoundException: Vite manifest not found at: /var/www/shop/public/build/manifest.json"),
    E(".github/workflows/deploy.yml",
      "      - run: composer install --no-dev --optimize-autoloader",
      "      - run: composer install --no-dev --optimize-autoloader\n      - run: npm ci && npm run build"),
    N("el pipeline de despliegue no compilaba los assets; ahora npm ci && npm run build antes de subir."),
], [("exact", "ViteManifestNotFoundException"),
    ("para_es", "la tienda en vivo mostraba una pantalla rota porque faltaban los recursos de interfaz generados en la entrega"),
    ("cross", "the production shop page failed because the frontend asset bundle was never compiled during deploy, what step did we add?")])

# ---------------------------------------------------------------- chat-phx (Elixir / Phoenix)

F("phx01", "chat-phx", "en", [
    P("when a user opens the chat in two browser tabs they show up twice in the online sidebar"),
    E("lib/chat_web/live/room_live.ex",
      "    online = Presence.list(topic) |> Enum.flat_map(fn {_id, %{metas: metas}} -> metas end)",
      "    # one entry per user_id; metas holds one element per tab/connection\n"
      "    online = Presence.list(topic) |> Enum.map(fn {user_id, %{metas: [first | _]}} -> Map.put(first, :user_id, user_id) end)"),
], [("exact", "Presence.list(topic)"),
    ("para", "someone using several windows appeared as duplicate avatars in the who's-here panel; how are entries collapsed?"),
    ("cross", "un usuario con dos pestañas aparecía dos veces en la lista de conectados, ¿cómo lo agrupamos?"),
    ("kw", "two browser tabs twice online sidebar")])

F("phx02", "chat-phx", "en", [
    B("mix test test/chat_web/channels/room_channel_test.exs",
      "  1) test new_msg broadcasts to everyone in the room (ChatWeb.RoomChannelTest)\n"
      "     ** (DBConnection.OwnershipError) cannot find ownership process for #PID<0.512.0>.\n\n"
      "     When using ownership, you must manage connections in one of the four ways:\n"
      "     * By explicitly checking out a connection\n     * By explicitly allowing a spawned process\n"
      "     * By running the pid with the caller's connection\n     * By using :shared mode\n\n3 tests, 1 failure"),
    E("test/support/channel_case.ex",
      "    :ok = Ecto.Adapters.SQL.Sandbox.checkout(Chat.Repo)",
      "    pid = Ecto.Adapters.SQL.Sandbox.start_owner!(Chat.Repo, shared: not tags[:async])\n"
      "    on_exit(fn -> Ecto.Adapters.SQL.Sandbox.stop_owner(pid) end)"),
], [("exact", "DBConnection.OwnershipError"), ("exact", "Sandbox.start_owner!"),
    ("para", "socket specs intermittently couldn't reach postgres because a forked actor wasn't granted the borrowed link"),
    ("cross", "los tests del canal fallaban a veces con un error de ownership de la conexión, ¿qué cambiamos en channel_case?")])

F("phx03", "chat-phx", "en", [
    B("iex -S mix phx.server",
      "[error] GenServer #PID<0.2291.0> terminating\n** (stop) exited in: GenServer.call(Chat.RoomRegistry, {:lookup, \"lobby\"}, 5000)\n"
      "    ** (EXIT) time out\nLast message: %Phoenix.Socket.Message{topic: \"room:lobby\", event: \"phx_join\"}"),
    N("Chat.RoomRegistry did a Repo query inside handle_call, so every join queued behind it. Replaced it with an ETS table "
      "(read_concurrency: true) that lookups read directly; the GenServer only owns the table and writes."),
    E("lib/chat/room_registry.ex",
      "  def lookup(name), do: GenServer.call(__MODULE__, {:lookup, name})",
      "  def lookup(name) do\n    case :ets.lookup(:room_registry, name) do\n      [{^name, pid}] -> {:ok, pid}\n      [] -> :error\n    end\n  end"),
], [("exact", "GenServer.call(Chat.RoomRegistry"), ("exact", ":ets.lookup(:room_registry, name)"),
    ("para", "entering a channel stalled waiting on one process hitting postgres for every resolution; what in-memory structure answers those queries today?"),
    ("kw", "RoomRegistry handle_call ETS read_concurrency")])

F("phx04", "chat-phx", "en", [
    P("the release on prod connects to the staging database. DATABASE_URL is set correctly in the container env"),
    G("DATABASE_URL", "config", "config/prod.exs:12:  url: System.get_env(\"DATABASE_URL\"),"),
    E("config/runtime.exs",
      "if config_env() == :prod do",
      "if config_env() == :prod do\n  config :chat, Chat.Repo,\n    url: System.fetch_env!(\"DATABASE_URL\"),\n    pool_size: String.to_integer(System.get_env(\"POOL_SIZE\") || \"10\")"),
], [("exact", "System.fetch_env!(\"DATABASE_URL\")"),
    ("para", "the shipped artifact talked to the pre-production postgres because a DSN got frozen at compile time"),
    ("cross", "la release de producción se conectaba a la base de staging aunque la variable estaba bien, ¿por qué?")])

F("phx05", "chat-phx", "en", [
    B("kubectl -n chat logs deploy/chat-phx --since=10m | grep -m2 origin",
      "[error] Could not check origin for Phoenix.Socket transport.\n\nOrigin of the request: https://chat.example.org\n\n"
      "This happens when you are attempting a socket connection to a different host than the one configured in your config/ files."),
    E("config/runtime.exs",
      "    url: [host: host, port: 443, scheme: \"https\"],",
      "    url: [host: host, port: 443, scheme: \"https\"],\n    check_origin: [\"https://chat.example.org\", \"https://app.example.org\"],"),
], [("exact", "Could not check origin for Phoenix.Socket transport"),
    ("para", "realtime links from the public domain were refused after going to production; which permitted sites did we list?"),
    ("kw", "origin Phoenix.Socket transport check_origin", "en")])

F("phx06", "chat-phx", "en", [
    P("the room LiveView process grows to 400 MB in busy rooms, we keep every message in assigns"),
    E("lib/chat_web/live/room_live.ex",
      "    {:noreply, update(socket, :messages, &(&1 ++ [msg]))}",
      "    {:noreply, stream_insert(socket, :messages, msg, limit: -200)}"),
    N("messages are a LiveView stream now (stream/4 on mount, stream_insert with limit: -200); the process stays around 30 MB."),
], [("exact", "stream_insert(socket, :messages, msg, limit: -200)"),
    ("para", "each crowded conversation page kept its whole history in server-side state and ballooned to hundreds of megabytes"),
    ("cross", "¿por qué el proceso del LiveView de la sala crecía a cientos de MB y qué usamos en su lugar?")])

F("phx07", "chat-phx", "en", [
    B("gh run view 8129443 --log | grep -E 'dialyzer|Elapsed'",
      "dialyzer  Finding suitable PLTs\ndialyzer  Creating PLT priv/plts/dialyxir_erlang-26.2_elixir-1.16.1.plt ...\n"
      "dialyzer  done in 11m42.06s"),
    E(".github/workflows/ci.yml",
      "      - run: mix dialyzer",
      "      - uses: actions/cache@v4\n        with:\n          path: priv/plts\n          key: plts-${{ hashFiles('mix.lock') }}\n      - run: mix dialyzer"),
], [("exact", "priv/plts"),
    ("para", "type analysis in the pipeline rebuilt its lookup tables from scratch on each build, taking almost twelve minutes"),
    ("cross", "dialyzer tardaba casi 12 minutos en CI, ¿qué cacheamos y con qué clave?"),
    ("kw", "dialyzer PLT cache mix.lock")])

F("phx08", "chat-phx", "en", [
    B("mix test test/chat_web/controllers/message_json_test.exs",
      "  1) test renders author name (ChatWeb.MessageJSONTest)\n     ** (KeyError) key :name not found in: #Ecto.Association.NotLoaded<association :author is not loaded>"),
    E("lib/chat/messages.ex",
      "    Repo.all(from m in Message, where: m.room_id == ^room_id, order_by: [desc: m.inserted_at], limit: 50)",
      "    Repo.all(from m in Message, where: m.room_id == ^room_id, order_by: [desc: m.inserted_at], limit: 50, preload: [:author])"),
], [("exact", "association :author is not loaded"),
    ("para", "displaying who wrote each conversation line blew up because the related user wasn't fetched alongside"),
    ("kw", "renders author name preload")])

F("phx09", "chat-phx", "en", [
    P("someone flooded #general with 3,000 messages in a minute using a script. we need per-user limits"),
    E("lib/chat_web/channels/room_channel.ex",
      "  def handle_in(\"new_msg\", %{\"body\" => body}, socket) do",
      "  def handle_in(\"new_msg\", %{\"body\" => body}, socket) do\n"
      "    case Hammer.check_rate(\"msg:#{socket.assigns.user_id}\", 5_000, 10) do\n"
      "      {:deny, _} -> {:reply, {:error, %{reason: \"slow_down\"}}, socket}\n      {:allow, _} -> post(body, socket)\n    end"),
    N("Decision: 10 messages per 5 seconds per user, enforced in the channel with Hammer (ETS backend); the client shows slow_down as a toast."),
], [("exact", "Hammer.check_rate"), ("exact", "slow_down"),
    ("para", "an automated spammer blasted thousands of lines into the lobby; what throttle per person did we decide on?"),
    ("cross", "¿qué límite de mensajes por usuario pusimos en el canal después del spam en #general?")])

F("phx10", "chat-phx", "es", [
    B("kubectl -n chat exec chat-phx-0 -- bin/chat rpc 'IO.inspect(Node.list())'", "[]"),
    N("los nodos no se ven con libcluster porque cada contenedor genera su propio RELEASE_COOKIE. Lo fijo desde un secreto de Kubernetes."),
    E("k8s/statefulset.yaml",
      "        env:\n          - name: RELEASE_DISTRIBUTION\n            value: name",
      "        env:\n          - name: RELEASE_DISTRIBUTION\n            value: name\n          - name: RELEASE_COOKIE\n"
      "            valueFrom:\n              secretKeyRef: {name: chat-erlang, key: cookie}"),
], [("exact", "RELEASE_COOKIE"),
    ("para_es", "las réplicas de la BEAM no formaban grupo porque cada una inventaba su galleta de autenticación; ¿de dónde sale ahora?"),
    ("cross", "the Phoenix pods did not see each other in the cluster, what did we set from a Kubernetes secret?"),
    ("kw", "nodos libcluster contenedor secreto", "es")])

F("phx11", "chat-phx", "es", [
    P("los mensajes enviados en el mismo segundo salen desordenados en la sala"),
    E("lib/chat/messages/message.ex",
      "    timestamps()",
      "    timestamps(type: :utc_datetime_usec)"),
    N("inserted_at tenía precisión de segundos (naive_datetime); con :utc_datetime_usec el orden es estable. Migración que altera la columna incluida."),
], [("exact", ":utc_datetime_usec"),
    ("para_es", "varias líneas escritas casi a la vez aparecían barajadas; ¿qué resolución temporal elegimos?"),
    ("cross", "chat messages sent within the same second showed up out of order, what timestamp type fixed it?")])

F("phx12", "chat-phx", "es", [
    B("mix test test/chat_web/live/avatar_live_test.exs",
      "  1) test uploads a 12MB avatar (ChatWeb.AvatarLiveTest)\n     Assertion with == failed\n     left:  [:too_large]\n     right: []"),
    E("lib/chat_web/live/avatar_live.ex",
      "    |> allow_upload(:avatar, accept: ~w(.jpg .png .webp))",
      "    |> allow_upload(:avatar, accept: ~w(.jpg .png .webp), max_file_size: 20_000_000)"),
    N("el límite por defecto de allow_upload es 8 MB y las fotos del móvil pasan de eso; max_file_size explícito a 20 MB y el error :too_large se muestra en el formulario."),
], [("exact", "max_file_size: 20_000_000"), ("exact", ":too_large"),
    ("para_es", "las imágenes de perfil pesadas se rechazaban al subirlas desde la vista en vivo; ¿qué tope configuramos?"),
    ("cross", "avatar uploads in LiveView were rejected as too large, what size limit did we configure?")])

F("phx13", "chat-phx", "es", [
    P("¿enviamos las notificaciones push con Task.async o montamos algo con reintentos?"),
    N("decisión: Oban para las notificaciones push. Task.async pierde el trabajo si el nodo se reinicia y no reintenta; "
      "Oban persiste en Postgres y reintenta con max_attempts: 5."),
    W("lib/chat/workers/push_worker.ex",
      "defmodule Chat.Workers.PushWorker do\n  use Oban.Worker, queue: :push, max_attempts: 5\n\n"
      "  @impl Oban.Worker\n  def perform(%Oban.Job{args: %{\"user_id\" => id, \"body\" => body}}), do: Chat.Push.send(id, body)\nend\n"),
], [("exact", "Chat.Workers.PushWorker"),
    ("para_es", "para mandar avisos al móvil sin perderlos si se cae una máquina, ¿qué cola durable escogimos?"),
    ("cross", "why did we choose Oban over Task.async for push notifications?"),
    ("kw", "notificaciones push reintentos Oban", "es")])

# ---------------------------------------------------------------- forge-tools (C++ / CMake)

F("cpp01", "forge-tools", "en", [
    B("cmake --build build -j8",
      "[212/214] Linking CXX executable tools/leveledit/leveledit\nFAILED: tools/leveledit/leveledit\n"
      "ld.lld: error: duplicate symbol: forge::kDefaultTint\n>>> defined at color.h:9 (engine/render/color.h:9)\n"
      ">>>            engine/render/CMakeFiles/forge_render.dir/material.cpp.o\n>>> defined at color.h:9 (engine/render/color.h:9)\n"
      ">>>            tools/leveledit/CMakeFiles/leveledit.dir/src/palette.cpp.o\nclang++: error: linker command failed with exit code 1"),
    E("engine/render/color.h",
      "const Color kDefaultTint = Color{1.0f, 0.97f, 0.92f, 1.0f};",
      "inline constexpr Color kDefaultTint{1.0f, 0.97f, 0.92f, 1.0f};"),
], [("exact", "duplicate symbol: forge::kDefaultTint"),
    ("para", "a fixed colour value declared in a shared header ended up twice at link time; what keyword combination did we apply?"),
    ("cross", "el enlazador se quejaba de un símbolo duplicado para una constante del header de color, ¿cómo lo resolvimos?")])

F("cpp02", "forge-tools", "en", [
    B("ASAN_OPTIONS=halt_on_error=1 ./build-asan/tests/JobSystemTest",
      "==48211==ERROR: AddressSanitizer: heap-use-after-free on address 0x6060000a1f20 at pc 0x55d1c2 bp 0x7ffc sp 0x7ffc\n"
      "READ of size 8 at 0x6060000a1f20 thread T3\n    #0 0x55d1c1 in forge::JobSystem::worker_loop() engine/core/job_system.cpp:88\n"
      "freed by thread T0 here:\n    #1 in std::vector<forge::Job>::_M_realloc_insert engine/core/job_system.cpp:54"),
    E("engine/core/job_system.h",
      "    std::vector<Job> jobs_;",
      "    std::deque<Job> jobs_;  // workers hold Job& while submit() appends; deque never moves existing elements"),
], [("exact", "heap-use-after-free"), ("exact", "std::deque<Job> jobs_"),
    ("para", "pool executors dereferenced a task after the container holding it grew and relocated; which container replaced it?"),
    ("kw", "AddressSanitizer JobSystem worker_loop realloc")])

F("cpp03", "forge-tools", "en", [
    P("in Release builds ShaderCache::instance() has zero registered loaders at startup, Debug is fine"),
    E("engine/render/shader_cache.cpp",
      "static ShaderCache g_cache;\nShaderCache& ShaderCache::instance() { return g_cache; }",
      "ShaderCache& ShaderCache::instance() {\n    static ShaderCache cache;  // constructed on first use, not at static-init time\n    return cache;\n}"),
    N("static initialization order fiasco: loaders in other translation units registered into g_cache before it was constructed. Function-local static fixes it."),
], [("exact", "ShaderCache::instance()"),
    ("para", "globals in separate source modules were built in an unpredictable sequence, so an optimized binary booted without any plugins present"),
    ("cross", "en Release el caché de shaders arrancaba sin loaders registrados, ¿qué problema de inicialización era?")])

F("cpp04", "forge-tools", "en", [
    B("/opt/forge/bin/assetc --version",
      "/opt/forge/bin/assetc: error while loading shared libraries: libforge_core.so: cannot open shared object file: No such file or directory"),
    E("CMakeLists.txt",
      "include(GNUInstallDirs)",
      "include(GNUInstallDirs)\nset(CMAKE_INSTALL_RPATH \"$ORIGIN/../${CMAKE_INSTALL_LIBDIR}\")"),
], [("exact", "libforge_core.so: cannot open shared object file"),
    ("para", "a deployed command-line utility couldn't locate its companion dynamic module at startup; how is the search path embedded?"),
    ("kw", "assetc shared libraries libforge_core RPATH", "en")])

F("cpp05", "forge-tools", "en", [
    B("cmake --build build-win --config Release",
      "packer.cpp\nC:\\src\\forge\\tools\\assetc\\src\\packer.cpp(211,31): error C2589: '(': illegal token on right side of '::'\n"
      "C:\\src\\forge\\tools\\assetc\\src\\packer.cpp(211,31): error C2062: type 'unknown-type' unexpected"),
    E("CMakeLists.txt",
      "if(WIN32)",
      "if(WIN32)\n  add_compile_definitions(NOMINMAX WIN32_LEAN_AND_MEAN)  # windows.h defines min/max macros"),
], [("exact", "error C2589"), ("exact", "NOMINMAX"),
    ("para", "the Microsoft toolchain choked on the standard smaller-of-two helper because a system header sneaks in same-named preprocessor shortcuts"),
    ("cross", "en Windows std::min daba un error de token ilegal en packer.cpp, ¿qué definimos?")])

F("cpp06", "forge-tools", "en", [
    P("replay of match_0412.rep desyncs at tick 18000 between laptop and desktop builds. same commit"),
    G("ffast-math", "cmake", "cmake/CompilerFlags.cmake:23:  target_compile_options(forge_physics PRIVATE -O3 -ffast-math)"),
    E("cmake/CompilerFlags.cmake",
      "  target_compile_options(forge_physics PRIVATE -O3 -ffast-math)",
      "  target_compile_options(forge_physics PRIVATE -O3 -ffp-contract=off)  # lockstep needs bit-identical floats"),
], [("exact", "-ffp-contract=off"), ("exact", "match_0412.rep"),
    ("para", "a recorded game diverged across two computers built from one revision; which aggressive arithmetic optimisation was removed?"),
    ("cross", "la repetición de la partida se desincronizaba entre portátil y sobremesa, ¿qué flag de compilación quitamos?")])

F("cpp07", "forge-tools", "en", [
    P("a clean rebuild takes 9 minutes on every branch switch, can we cache compiled objects?"),
    E("CMakePresets.json",
      "        \"CMAKE_BUILD_TYPE\": \"Debug\"",
      "        \"CMAKE_BUILD_TYPE\": \"Debug\",\n        \"CMAKE_CXX_COMPILER_LAUNCHER\": \"ccache\""),
    B("ccache -s",
      "Cacheable calls:   1843 / 1851 (99.57%)\n  Hits:            1790 / 1843 (97.12%)\n  Misses:            53 / 1843 ( 2.88%)\nLocal storage:\n  Cache size (GB): 2.1 / 5.0 (42.00%)"),
], [("exact", "CMAKE_CXX_COMPILER_LAUNCHER"),
    ("para", "changing checkouts meant waiting ages for complete recompiles; which reuse utility did we adopt?"),
    ("kw", "clean rebuild minutes ccache")])

F("cpp08", "forge-tools", "en", [
    B("ctest --test-dir build --output-on-failure",
      "Test project /home/dev/forge/build\nNo tests were found!!!"),
    E("CMakeLists.txt",
      "add_subdirectory(tests)\nenable_testing()",
      "enable_testing()\nadd_subdirectory(tests)"),
    E("tests/CMakeLists.txt",
      "add_executable(forge_tests math_test.cpp packer_test.cpp)",
      "add_executable(forge_tests math_test.cpp packer_test.cpp)\ninclude(GoogleTest)\ngtest_discover_tests(forge_tests)"),
], [("exact", "No tests were found!!!"), ("exact", "gtest_discover_tests"),
    ("para", "the runner reported zero cases although the suite binaries compiled fine; what ordering and registration were wrong?"),
    ("cross", "ctest decía que no encontraba ningún test aunque compilaban, ¿qué faltaba en CMake?")])

F("cpp09", "forge-tools", "en", [
    P("albedo textures look washed out in-game after assetc pack, compared to the source PNGs"),
    E("tools/assetc/src/packer.cpp",
      "        fmt = DXGI_FORMAT_BC7_UNORM;",
      "        fmt = tex.is_color ? DXGI_FORMAT_BC7_UNORM_SRGB : DXGI_FORMAT_BC7_UNORM;"),
    N("the sRGB flag was dropped when compressing to BC7, so the shader applied gamma twice. Normal maps and masks stay linear."),
], [("exact", "DXGI_FORMAT_BC7_UNORM_SRGB"),
    ("para", "colour imagery looked faded after the content pipeline squeezed it; which pixel encoding do diffuse surfaces get?"),
    ("cross", "las texturas de albedo se veían lavadas tras empaquetarlas, ¿qué formato BC7 usamos ahora?"),
    ("kw", "albedo textures washed out BC7")])

F("cpp10", "forge-tools", "es", [
    B("cmake --build build -j8",
      "FAILED: tools/assetc/CMakeFiles/assetc.dir/Unity/unity_0_cxx.cxx.o\n"
      "tools/assetc/src/packer.cpp:31:13: error: redefinition of 'clamp01'\n"
      "tools/assetc/src/mips.cpp:18:13: note: previous definition is here"),
    E("tools/assetc/CMakeLists.txt",
      "set_target_properties(assetc PROPERTIES UNITY_BUILD ON)",
      "set_target_properties(assetc PROPERTIES UNITY_BUILD ON)\nset_source_files_properties(src/packer.cpp PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)"),
    N("al activar UNITY_BUILD chocan las funciones de namespaces anónimos (clamp01 está en packer.cpp y en mips.cpp). Excluyo packer.cpp hasta unificar helpers."),
], [("exact", "SKIP_UNITY_BUILD_INCLUSION"), ("exact", "redefinition of 'clamp01'"),
    ("para_es", "juntar varias unidades de traducción en una sola provocó un conflicto entre dos utilidades auxiliares privadas; ¿qué fuente apartamos?"),
    ("cross", "enabling unity builds broke the asset compiler with a duplicate helper, which source did we exclude?")])

F("cpp11", "forge-tools", "es", [
    P("el hot reload de shaders no detecta cambios en el Mac, en Linux va bien"),
    N("en macOS no hay inotify; el watcher usaba inotify_init1 directamente. Cambio a efsw, que usa FSEvents en macOS e inotify en Linux."),
    E("engine/render/shader_watch.cpp",
      "    fd_ = inotify_init1(IN_NONBLOCK);",
      "    watcher_ = std::make_unique<efsw::FileWatcher>();\n    watcher_->addWatch(dir, &listener_, /*recursive=*/true);"),
], [("exact", "inotify_init1"), ("exact", "efsw::FileWatcher"),
    ("para_es", "recargar en caliente los sombreadores no funcionaba en el portátil de Apple; ¿qué biblioteca de vigilancia de ficheros usamos?"),
    ("cross", "shader hot reload did not notice changes on macOS, which file watching library replaced the Linux-only call?"),
    ("kw", "hot reload shaders Mac cambios", "es")])

F("cpp12", "forge-tools", "es", [
    P("¿merece la pena usar cabeceras precompiladas en engine? la compilación completa tarda mucho"),
    E("engine/CMakeLists.txt",
      "target_link_libraries(forge_core PUBLIC fmt::fmt glm::glm)",
      "target_link_libraries(forge_core PUBLIC fmt::fmt glm::glm)\ntarget_precompile_headers(forge_core PRIVATE <vector> <string> <memory> <unordered_map> <fmt/format.h>)"),
    N("decisión: target_precompile_headers solo con cabeceras estables (STL y fmt), nunca nuestras; la compilación completa baja un 35%."),
], [("exact", "target_precompile_headers"),
    ("para_es", "¿qué criterio seguimos al elegir qué incluir en el encabezado preprocesado del motor y cuánto se ganó?"),
    ("cross", "which headers did we decide to put in precompiled headers for the engine and how much faster did it get?")])

F("cpp13", "forge-tools", "es", [
    B("./build/tools/leveledit/leveledit levels/old/canyon_02.lvl",
      "terminate called after throwing an instance of 'nlohmann::json_abi_v3_11_2::detail::type_error'\n"
      "  what():  [json.exception.type_error.302] type must be number, but is null\nAborted (core dumped)"),
    E("tools/leveledit/src/level_io.cpp",
      "        spawn.weight = j.at(\"spawn_weight\").get<float>();",
      "        spawn.weight = j.value(\"spawn_weight\", 1.0f);  // niveles antiguos lo guardan como null o no lo tienen"),
    N("el editor de niveles se caía al abrir niveles viejos: spawn_weight es null. Valor por defecto 1.0."),
], [("exact", "type_error.302"), ("exact", "spawn_weight"),
    ("para_es", "cargar mapas de hace tiempo tumbaba la herramienta de diseño porque un peso de aparición venía vacío; ¿qué cifra asumimos?"),
    ("cross", "the level editor crashed opening old levels with a JSON type error, what default did we use?"),
    ("kw", "editor niveles viejos null defecto", "es")])

# ============================================================================
# Distractors: same topic as a fact, another project or another detail. Never targets.
# ============================================================================

DISTRACTORS = [
    ("inventory-svc", B("./gradlew flywayInfo",
        "+-----------+---------+------------------------+------+---------------------+---------+\n| Category  | Version | Description            | Type | Installed On        | State   |\n"
        "+-----------+---------+------------------------+------+---------------------+---------+\n| Versioned | 12      | add sku index          | SQL  | 2024-02-20 10:01:55 | Success |\n"
        "| Versioned | 13      | zone comment           | SQL  | 2024-03-02 09:12:10 | Success |\n+-----------+---------+------------------------+------+---------------------+---------+")),
    ("shop-laravel", N("redid the coupons migration locally with php artisan migrate:rollback --step=1; it was never deployed, so editing it was fine")),
    ("inventory-svc", N("LazyInitializationException in the nightly report job (no web request, so open-in-view never applied). "
                        "Annotated ReportJob.run with @Transactional(readOnly = true).")),
    ("recsys-api", N("CUDA OOM at inference with batch 1 was fragmentation, not size: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True. empty_cache() did nothing.")),
    ("inventory-svc", B("docker compose up -d postgres",
        "permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock: "
        "Get \"http://%2Fvar%2Frun%2Fdocker.sock/v1.24/containers/json\": dial unix /var/run/docker.sock: connect: permission denied")),
    ("inventory-svc", N("desktop: added my user to the docker group (sudo usermod -aG docker dev) so compose works without sudo")),
    ("chat-phx", E("lib/chat/workers/digest_worker.ex", "  use Oban.Worker, queue: :mail",
                   "  use Oban.Worker, queue: :mail, unique: [period: 3600, keys: [:user_id]]  # one digest per user per hour")),
    ("shop-laravel", N("Product price cast 'decimal:2' gives a string like \"19.90\", not a float; compare with bccomp in the admin filters")),
    ("recsys-api", E("app/main.py", "app = FastAPI(title=\"recsys-api\")",
                     "app = FastAPI(title=\"recsys-api\", docs_url=None if settings.env == \"prod\" else \"/docs\")")),
    ("chat-phx", E("lib/chat_web/components/time.ex", "    Calendar.strftime(dt, \"%H:%M\")",
                   "    dt |> DateTime.shift_zone!(\"Europe/Madrid\") |> Calendar.strftime(\"%H:%M\")")),
    ("shop-laravel", B("mysql -e \"SHOW VARIABLES LIKE 'max_connections'\"",
        "+-----------------+-------+\n| Variable_name   | Value |\n+-----------------+-------+\n| max_connections | 151   |\n+-----------------+-------+")),
    ("shop-laravel", N("SQLSTATE[HY000] [1040] Too many connections during the sale: raised max_connections to 400 and set Horizon to 12 processes")),
    ("forge-tools", E(".github/workflows/build.yml", "      - run: cmake --build build",
                      "      - uses: actions/cache@v4\n        with:\n          path: ~/.cache/ccache\n          key: ccache-${{ runner.os }}-${{ github.sha }}\n          restore-keys: ccache-${{ runner.os }}-\n      - run: cmake --build build")),
    ("trailmate-ios", E("TrailMate/Views/AddHikeView.swift", "            TextField(\"Distance\", text: $distance)",
                        "            TextField(\"Distance\", text: $distance)\n                .keyboardType(.decimalPad)")),
    ("recsys-api", N("RuntimeError: This event loop is already running — only in the notebook; use await directly in Jupyter instead of asyncio.run")),
    ("forge-tools", B("valgrind --leak-check=full ./build/tools/assetc/assetc pack assets/ -o /tmp/a.pak",
        "==9120== 4,096 bytes in 1 blocks are definitely lost in loss record 12 of 40\n==9120==    at 0x4848899: malloc\n"
        "==9120==    by 0x1A2B3C: stbi_load (stb_image.h:1420)\n==9120==    by 0x1A0F11: forge::assetc::load_texture (texture_loader.cpp:37)")),
    ("forge-tools", N("leak in texture_loader.cpp: missing stbi_image_free after copying pixels; fixed")),
    ("chat-phx", N("frontend showed message times an hour off: Jason encodes NaiveDateTime without a Z, so JS parsed it as local time")),
    ("inventory-svc", E(J + "ExportController.java", "    @GetMapping(\"/api/skus/export\")",
                        "    @RateLimited(capacity = 5, refillPerMinute = 5)  // Bucket4j, the export is expensive\n    @GetMapping(\"/api/skus/export\")")),
    ("shop-laravel", E(".env.production", "SESSION_LIFETIME=120", "SESSION_LIFETIME=480")),
    ("shop-laravel", E("config/cors.php", "    'supports_credentials' => false,", "    'supports_credentials' => true,  // the SPA sends the sanctum cookie")),
    ("forge-tools", N("terrain generator seeds std::mt19937 with a hash of the level name, so a level always generates the same heightmap")),
    ("shop-laravel", E("app/Http/Controllers/HomeController.php", "        $bestsellers = Product::bestsellers()->take(8)->get();",
                       "        $bestsellers = Cache::remember('home.bestsellers', 600, fn () => Product::bestsellers()->take(8)->get());")),
    ("trailmate-ios", B("python tools/convert_ranker.py --out TrailMate/ML/TrailRanker.mlpackage",
        "Converting PyTorch Frontend ==> MIL Ops: 100%|██████████| 212/212\nRunning MIL default pipeline: 100%|██████████| 79/79\nsaved TrailRanker.mlpackage (compute_units=ALL)")),
    ("chat-phx", E("lib/chat/rooms/room.ex", "    |> validate_required([:name])",
                   "    |> validate_required([:name])\n    |> unique_constraint(:name)  # was raising Ecto.ConstraintError on duplicate room names")),
    ("inventory-svc", E(J + "SupplierNotificationService.java", "    public void notifyLowStock(Sku sku) {",
                        "    @Async(\"notificationExecutor\")\n    public void notifyLowStock(Sku sku) {")),
    ("forge-tools", B("cmake --build build -j8",
        "[88/214] Linking CXX executable tools/leveledit/leveledit\nFAILED: tools/leveledit/leveledit\n"
        "ld.lld: error: undefined symbol: forge::Logger::instance()\n>>> referenced by level_io.cpp:14\nclang++: error: linker command failed with exit code 1")),
    ("forge-tools", N("leveledit link error: forge_log was not in target_link_libraries(leveledit ...); added it")),
    ("forge-tools", B("TSAN_OPTIONS=halt_on_error=1 ./build-tsan/tests/JobSystemTest",
        "WARNING: ThreadSanitizer: data race (pid=5121)\n  Write of size 8 at 0x7b0400000018 by thread T2:\n    #0 forge::JobSystem::stats_bump() engine/core/job_system.cpp:120\n"
        "  Previous write of size 8 by thread T1:\n    #0 forge::JobSystem::stats_bump() engine/core/job_system.cpp:120")),
    ("forge-tools", N("stats counter in JobSystem is std::atomic<uint64_t> now (relaxed increments); TSan clean")),
    ("trailmate-ios", E("TrailMate/Persistence/CoreDataStack.swift", "        context.automaticallyMergesChangesFromParent = true",
                        "        context.automaticallyMergesChangesFromParent = true\n        context.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy")),
    ("trailmate-ios", N("fastlane snapshot took 20 minutes; screenshots now only on iPhone 15 Pro Max and iPad Pro 12.9")),
    ("inventory-svc", E("src/main/resources/application.yml", "    jackson:\n      serialization:\n        write-dates-as-timestamps: true",
                        "    jackson:\n      serialization:\n        write-dates-as-timestamps: false")),
    ("inventory-svc", N("max.poll.interval.ms exceeded on the bulk import consumer: processing 500 records took >5 min. max.poll.records=100")),
    ("recsys-api", N("settings: pydantic-settings reads .env only on dev machines; in the cluster everything comes from the ConfigMap")),
    ("trailmate-ios", E("TrailMate/Info.plist", "\t<key>UIBackgroundModes</key>\n\t<array>\n\t\t<string>fetch</string>",
                        "\t<key>UIBackgroundModes</key>\n\t<array>\n\t\t<string>fetch</string>\n\t\t<string>location</string>")),
    ("chat-phx", P("los tests de LiveView van lentos, ¿podemos marcar más módulos con async: true?")),
    ("recsys-api", P("¿por qué el endpoint de similares tarda 300 ms la primera vez? parece que carga el índice en frío")),
    ("shop-laravel", P("revisa por qué el cupón de envío gratis no se aplica si el carrito tiene un producto digital")),
]


# ============================================================================
# Assembly
# ============================================================================

def build():
    rng = Random(SEED)
    sessions = []
    for project in PROJECTS:
        for _ in range(5):
            sessions.append(dict(project=project, machine=rng.choice(["laptop", "desktop"]),
                                 length=rng.randint(42, 56), blocks=[]))
    rng.shuffle(sessions)
    by_project = {}
    for s in sessions:
        by_project.setdefault(s["project"], []).append(s)

    # noise: one record per block
    for s in sessions:
        spec = PROJECTS[s["project"]]
        prev = None
        for _ in range(s["length"]):
            rec = noise_record(rng, s["project"], spec)
            while prev and (rec["title"], rec["input"]) == (prev["title"], prev["input"]):
                rec = noise_record(rng, s["project"], spec)  # no identical record twice in a row
            s["blocks"].append([rec])
            prev = rec

    # facts and distractors: inserted as blocks at random places in a session of their project
    for fact in FACTS:
        s = rng.choice(by_project[fact["project"]])
        recs = [dict(r, _fact=fact["id"]) for r in fact["recs"]]
        s["blocks"].insert(rng.randint(0, len(s["blocks"])), recs)
    for project, rec in DISTRACTORS:
        s = rng.choice(by_project[project])
        s["blocks"].insert(rng.randint(0, len(s["blocks"])), [dict(rec, _fact=None)])

    # time: sessions spread over 60 days, oldest first, never overlapping
    corpus = []
    span = 60 * DAY - 400
    for i, s in enumerate(sessions):
        start = span - i * (span // len(sessions)) - rng.randint(0, 600)
        t = start
        for block in s["blocks"]:
            for j, rec in enumerate(block):
                t -= rng.randint(1, 3) if j else rng.randint(2, 7)
                out = dict(key=None, session="hs%03d" % (i + 1), project=s["project"], machine=s["machine"],
                           kind=rec["kind"], tool_name=rec["tool_name"], title=rec["title"], input=rec["input"],
                           response=rec["response"], minutes_ago=t, _fact=rec.get("_fact"))
                corpus.append(out)
    corpus.sort(key=lambda c: -c["minutes_ago"])
    for n, c in enumerate(corpus):
        c["key"] = "h%04d" % (n + 1)

    fact_keys = {}
    for c in corpus:
        if c["_fact"]:
            fact_keys.setdefault(c["_fact"], []).append(c["key"])
    by_key = {c["key"]: c for c in corpus}

    queries = []
    for fact in FACTS:
        keys = fact_keys[fact["id"]]
        other = "es" if fact["lang"] == "en" else "en"
        for q in fact["queries"]:
            kind, text = q[0], q[1]
            if kind == "exact":
                targets = [k for k in keys if text.lower() in rec_text(by_key[k]).lower()]
                qd = dict(text=text, lang=fact["lang"], kind="exact_identifier", targets=targets)
            elif kind == "kw":
                qd = dict(text=text, lang=q[2] if len(q) > 2 else fact["lang"], kind="keyword", targets=list(keys))
            elif kind == "para":
                qd = dict(text=text, lang="en", kind="paraphrase", targets=list(keys))
            elif kind == "para_es":
                qd = dict(text=text, lang="es", kind="paraphrase_es", targets=list(keys))
            elif kind == "cross":
                qd = dict(text=text, lang=other, kind="cross_language", targets=list(keys))
            else:
                raise ValueError(kind)
            qd["_fact"] = fact["id"]
            queries.append(qd)
    rng.shuffle(queries)
    for n, q in enumerate(queries):
        q["id"] = "hq%03d" % (n + 1)
    return corpus, queries


# ============================================================================
# Checks
# ============================================================================

def validate(corpus, queries):
    problems, warnings = [], []
    by_key = {c["key"]: c for c in corpus}
    fact_lang = {f["id"]: f["lang"] for f in FACTS}
    if len(by_key) != len(corpus):
        problems.append("duplicate corpus keys")
    if len({f["id"] for f in FACTS}) != len(FACTS):
        problems.append("duplicate fact ids")
    for i, c in enumerate(corpus):
        if c["key"] != "h%04d" % (i + 1):
            problems.append("key %s out of sequence" % c["key"])
        if i and c["minutes_ago"] >= corpus[i - 1]["minutes_ago"]:
            problems.append("%s: minutes_ago does not decrease with key order" % c["key"])
        if not 0 <= c["minutes_ago"] <= 60 * DAY:
            problems.append("%s: minutes_ago %d outside 0..60 days" % (c["key"], c["minutes_ago"]))
        size = len(json.dumps(public(c), ensure_ascii=False).encode("utf-8"))
        if size >= 24 * 1024:
            problems.append("record %s is %d bytes (must stay below 24 KB)" % (c["key"], size))
    for f in FACTS:
        if not 1 <= len(f["recs"]) <= 3:
            problems.append("fact %s has %d records (need 1..3)" % (f["id"], len(f["recs"])))
    for txt, n in Counter(q["text"] for q in queries).items():
        if n > 1:
            problems.append("duplicate query text: %r" % txt)
    kinds = Counter(q["kind"] for q in queries)
    for kind, n in MIN_PER_KIND.items():
        if kinds[kind] < n:
            problems.append("kind %s has %d queries, needs >= %d" % (kind, kinds[kind], n))
    for lang in ("en", "es"):
        n = sum(1 for q in queries if q["kind"] == "cross_language" and q["lang"] == lang)
        if n < MIN_CROSS_EACH_WAY:
            problems.append("only %d cross_language queries in %s (need %d)" % (n, lang, MIN_CROSS_EACH_WAY))
    for q in queries:
        tag = "%s [%s] %r" % (q["id"], q["kind"], q["text"])
        flang = fact_lang[q["_fact"]]
        if not 1 <= len(q["targets"]) <= 3:
            problems.append("%s: %d targets (need 1..3)" % (tag, len(q["targets"])))
        missing = [k for k in q["targets"] if k not in by_key]
        if missing:
            problems.append("%s: targets not in corpus: %s" % (tag, missing))
            continue
        for k in q["targets"]:
            if by_key[k]["_fact"] != q["_fact"]:
                problems.append("%s: target %s is not a record of fact %s" % (tag, k, q["_fact"]))
        ttexts = [rec_text(by_key[k]) for k in q["targets"]]
        if q["kind"] == "paraphrase" and (flang != "en" or q["lang"] != "en"):
            problems.append("%s: paraphrase must be English about an English fact" % tag)
        if q["kind"] == "paraphrase_es" and (flang != "es" or q["lang"] != "es"):
            problems.append("%s: paraphrase_es must be Spanish about a Spanish fact" % tag)
        if q["kind"] == "cross_language" and q["lang"] == flang:
            problems.append("%s: cross_language query in its fact's language" % tag)
        if q["kind"] in ("paraphrase", "paraphrase_es"):
            qw = words(q["text"])
            if len(qw) < 3:
                problems.append("%s: too few content words" % tag)
            for k, tt in zip(q["targets"], ttexts):
                tw = set(words(tt))
                ts = {stem(w) for w in tw}
                shared = sorted({w for w in qw if w in tw or stem(w) in ts})
                if shared:
                    problems.append("%s: shares words/stems with %s: %s" % (tag, k, shared))
        if q["kind"] == "keyword":
            union = set()
            for tt in ttexts:
                union |= set(words(tt))
            absent = [w for w in words(q["text"]) if w not in union]
            if absent:
                problems.append("%s: keyword words not in its targets: %s" % (tag, absent))
            if len(words(q["text"])) < 2:
                problems.append("%s: too few keywords" % tag)
        if q["kind"] == "exact_identifier":
            for k, tt in zip(q["targets"], ttexts):
                if q["text"].lower() not in tt.lower():
                    problems.append("%s: identifier not literally in %s" % (tag, k))
            needle = q["text"].lower()
            others = [c["key"] for c in corpus if c["key"] not in q["targets"] and needle in rec_text(c).lower()]
            if others:
                warnings.append("%s: also literally in non-targets %s" % (tag, others[:6]))
    return problems, warnings


def public(c):
    return {k: v for k, v in c.items() if not k.startswith("_")}


def summary(corpus, queries):
    lines = ["records %d, sessions %d, facts %d (en %d, es %d), fact records %d, distractors %d" % (
        len(corpus), len({c["session"] for c in corpus}), len(FACTS),
        sum(f["lang"] == "en" for f in FACTS), sum(f["lang"] == "es" for f in FACTS),
        sum(1 for c in corpus if c["_fact"]), len(DISTRACTORS))]
    kinds = Counter((q["kind"], q["lang"]) for q in queries)
    for kind in MIN_PER_KIND:
        lines.append("  %-17s %3d  (en %d, es %d)" % (kind, kinds[(kind, "en")] + kinds[(kind, "es")],
                                                    kinds[(kind, "en")], kinds[(kind, "es")]))
    lines.append("queries %d" % len(queries))
    # lexical baseline (eval/generate.py's bm25_ranks), for orientation only
    ranks = _base.bm25_ranks(corpus, queries)
    mrr = []
    for kind in MIN_PER_KIND:
        rr = [1.0 / ranks[q["id"]][0] if ranks[q["id"]][0] and ranks[q["id"]][0] <= 10 else 0.0
              for q in queries if q["kind"] == kind]
        mrr.append("%s %.2f" % (kind, sum(rr) / len(rr)))
    lines.append("BM25 baseline MRR@10: " + ", ".join(mrr))
    return "\n".join(lines)


def main():
    corpus, queries = build()
    problems, warnings = validate(corpus, queries)
    for w in warnings:
        print("warning:", w)
    if problems:
        for p in problems:
            print("problem:", p)
        print("%d problems; nothing written" % len(problems))
        sys.exit(1)
    with open(os.path.join(HERE, "corpus.jsonl"), "w", encoding="utf-8", newline="\n") as fh:
        for c in corpus:
            fh.write(json.dumps(public(c), ensure_ascii=False) + "\n")
    with open(os.path.join(HERE, "queries.jsonl"), "w", encoding="utf-8", newline="\n") as fh:
        for q in queries:
            out = dict(id=q["id"], text=q["text"], lang=q["lang"], kind=q["kind"], targets=q["targets"], project=None)
            fh.write(json.dumps(out, ensure_ascii=False) + "\n")
    print(summary(corpus, queries))


if __name__ == "__main__":
    main()
